// TrialRuns, part one: creating, resuming, starting and stopping trials,
// and what the experiment shows of them. Messages, results and the ends of
// runs are in trial_events.cpp, trials handed ahead in trial_handover.cpp.
#include "tune/trial_runs.h"

#include <fmt/format.h>

#include <algorithm>

#include "storage/checkpoint_layout.h"
#include "train/worker_env.h"

namespace tune {

TrialRuns::TrialRuns(Parts parts)
    : spec_(parts.spec),
      options_(parts.options),
      store_(parts.store),
      pool_(parts.pool),
      plugins_(parts.plugins),
      groups_(parts.groups),
      channel_(parts.channel),
      log_(parts.log),
      launch_(std::move(parts.launch)),
      trials_(parts.store),
      checkpoints_(parts.store, {spec_.num_to_keep, spec_.checkpoint_score_attribute,
                                 spec_.checkpoint_score_order}) {
  for (const auto& [key, domain] : spec_.param_space.searchable_domains()) {
    param_columns_.push_back(key);
  }
  // A group of several ranks ends when its last rank says DONE: one that
  // finished first would start the next trial alone.
  hands_ahead_ =
      groups_.reuses() && spec_.trainable.num_workers == 1 && plugins_.scheduler->chooses_ahead();
}

// ---- resume -------------------------------------------------------------------

void TrialRuns::load() {
  std::vector<storage::TrialRecord> records = store_.trials();
  std::sort(records.begin(), records.end(),
            [](const auto& a, const auto& b) { return a.trial_index < b.trial_index; });
  for (const auto& r : records) {
    Trial t;
    t.id = r.trial_id;
    t.index = r.trial_index;
    t.config = r.config;
    t.phase = phase_of(r.status);
    t.status_reason = r.status_reason;
    t.dir = r.trial_dir;
    t.created_at = r.created_at;
    t.started_at = r.started_at;
    t.finished_at = r.finished_at;
    t.num_failures = r.num_failures;
    t.attempt = static_cast<int>(r.num_failures);  // every failure was one attempt
    t.error = r.error;
    const auto results = store_.results(t.id);
    if (!results.empty()) {
      const auto& last = results.back();
      t.iteration = last.training_iteration;
      t.last_result = last.metrics;
      t.last_result["training_iteration"] = last.training_iteration;
      t.last_result["time_this_iter_s"] = last.time_this_iter_s;
      t.last_result["time_total_s"] = last.time_total_s;
      t.last_result["timestamp"] = last.timestamp;
      t.last_result["trial_id"] = t.id;
    }
    t.checkpoints = checkpoints_.load(t.id, results);
    resume_status(trials_.load(std::move(t)));
    next_index_ = std::max(next_index_, r.trial_index + 1);
  }
  if (auto state = store_.state("searcher")) plugins_.searcher->restore(*state);
  if (auto state = store_.state("scheduler")) plugins_.scheduler->restore(*state);
  if (auto state = store_.state("controller")) {
    searcher_finished_ = state->value("searcher_finished", false);
  }
  log_.log(1, "resuming {}: {} trials, {} finished", spec_.name, trials_.size(),
           trials_.count(TrialStatus::kTerminated) + trials_.count(TrialStatus::kError));
}

// What a stored trial becomes when the experiment resumes.
void TrialRuns::resume_status(Trial& t) {
  const std::string from = t.checkpoints.latest > 0
                               ? fmt::format("from checkpoint {}", t.checkpoints.latest)
                               : std::string("from scratch");
  const double now = unix_now();
  if (t.phase == TrialPhase::kRunning) {
    trials_.transition(t, TrialPhase::kPaused, "experiment resumed; restarts " + from, now);
  } else if (t.phase == TrialPhase::kPaused) {
    trials_.set_reason(t, "experiment resumed; restarts " + from);
  } else if (t.phase == TrialPhase::kError && options_.resume_errored) {
    trials_.transition(t, TrialPhase::kPaused, "resume_errored; restarts " + from, now);
  } else if (t.phase == TrialPhase::kError && options_.restart_errored) {
    t.checkpoints = {};
    trials_.transition(t, TrialPhase::kPending, "restart_errored; restarts from scratch", now);
  }
}

void TrialRuns::save_state(bool force) {
  const auto now = Clock::now();
  if (!force && now - last_state_save_ < std::chrono::seconds(1)) return;
  last_state_save_ = now;
  store_.put_state("searcher", plugins_.searcher->save());
  store_.put_state("scheduler", plugins_.scheduler->save());
  store_.put_state("controller", {{"searcher_finished", searcher_finished_}});
}

// ---- creating and starting ----------------------------------------------------

void TrialRuns::create_trials() {
  while (!searcher_finished_ &&
         trials_.count(TrialStatus::kPending) < plugins_.searcher->max_pending_trials()) {
    const std::string id = fmt::format("{}_{:05d}", spec_.name, next_index_);
    search::Suggestion s = plugins_.searcher->suggest(id);
    if (s.status == search::Suggestion::Status::kFinished) {
      searcher_finished_ = true;
      break;
    }
    if (s.status == search::Suggestion::Status::kNotReady) break;
    Trial& trial = trials_.create(id, next_index_++, std::move(s.config),
                                  spec_.experiment_dir() / "trials" / id, unix_now());
    // Its directory now, not on the way to its start; launch() names the
    // error if it cannot be made.
    std::error_code ignored;
    std::filesystem::create_directories(trial.dir, ignored);
    plugins_.scheduler->on_trial_add(trial.view());
    // The trial row and the searcher state that produced it commit
    // together, so a resume never suggests it twice.
    save_state(true);
  }
}

std::vector<Trial*> TrialRuns::waiting() {
  std::vector<Trial*> waiting = trials_.waiting();
  if (hands_ahead_) std::erase_if(waiting, [](const Trial* t) { return t->handed_ahead; });
  return waiting;
}

void TrialRuns::start_trials() {
  stop_waiting_trials();
  launch_waiting();
  hand_ahead();
  // Spares only once this turn's launches are done: a trial launched in
  // the same turn cannot take one (it has not connected yet), and one
  // started for nothing costs a process start on the CPUs the trials'
  // own starts need, and is killed at the end, often mid-handshake
  // (logged as refused).
  const bool more_to_start = !searcher_finished_ || trials_.count(TrialStatus::kPending) > 0 ||
                             trials_.count(TrialStatus::kPaused) > 0;
  while (more_to_start && groups_.wants_spare() && start_spare()) {
  }
}

void TrialRuns::launch_waiting() {
  while (true) {
    std::vector<Trial*> waiting = this->waiting();
    if (waiting.empty()) return;
    std::string reason = pool_.blocked_reason();
    if (reason.empty() && !groups_.can_place(spec_.trainable)) {
      reason = "waiting: no node has room for its ranks now";
    }
    if (!reason.empty()) {
      for (Trial* t : waiting) trials_.set_reason(*t, reason);
      return;
    }
    std::vector<schedulers::TrialView> views;
    views.reserve(waiting.size());
    for (Trial* t : waiting) views.push_back(t->view());
    int pick = plugins_.scheduler->choose_trial_to_run(views);
    if (pick < 0 || pick >= static_cast<int>(waiting.size())) {
      if (pool_.running() > 0) {
        for (Trial* t : waiting) trials_.set_reason(*t, "waiting: the scheduler chose none");
        return;
      }
      // Nothing runs, so nothing would ever change the scheduler's mind.
      log_.log(1, "warning: scheduler {} chose no trial while none runs; starting {}",
               plugins_.scheduler->debug_string(), waiting[0]->id);
      pick = 0;
    }
    Trial& chosen = *waiting[pick];
    if (chosen.phase == TrialPhase::kPaused) {
      // Synchronous PBT decides some exploits only now.
      if (auto exploit = plugins_.scheduler->take_exploit(chosen.id)) {
        apply_exploit(chosen, *exploit);
        if (is_finished(chosen.status())) continue;  // the clone failed it for good
      }
    }
    launch(chosen);
  }
}

// The run starts at the trial's latest checkpoint (or from scratch).
void TrialRuns::restart_from_checkpoint(Trial& trial) {
  trial.iteration = trial.checkpoints.latest;
  trial.time_offset_s = trial.checkpoints.latest > 0 ? trial.checkpoints.latest_time_total_s : 0.0;
  trial.collector.reset(spec_.trainable.num_workers, trial.iteration);
}

void TrialRuns::launch(Trial& trial) {
  // A trial paused with its ranks kept alive in report() goes on where it
  // stopped: same iteration, same time so far, nothing reloaded.
  const bool in_place = trial.suspended && groups_.holds_suspended(trial.id);
  const bool resuming = trial.checkpoints.latest > 0;
  const bool unpausing = trial.phase == TrialPhase::kPaused;
  if (in_place) {
    trial.collector.reset(spec_.trainable.num_workers, trial.iteration);
  } else {
    restart_from_checkpoint(trial);
  }
  reset_run(trial);
  auto gpus = pool_.acquire();
  trials_.transition(trial, TrialPhase::kRunning,
                     in_place ? fmt::format("resumed in place at iteration {}", trial.iteration)
                     : resuming
                         ? fmt::format("resumed from checkpoint {}", trial.checkpoints.latest)
                         : fmt::format("started (attempt {})", trial.attempt),
                     unix_now());
  if (unpausing) plugins_.searcher->on_trial_unpause(trial.id);
  GroupSource source = GroupSource::kLaunched;
  try {
    std::filesystem::create_directories(trial.dir);
    // Ranks waiting in place may hold a checkpoint they are about to stage;
    // a trial that never ran has nothing to clear.
    if (!in_place && trial.started_at) storage::clear_unpublished(trial.dir);
    const int master_port = train::free_loopback_port();
    source = groups_.start(trial.id, trial.attempt, master_port, gpus,
                           worker_launch(launch_, spec_, trial, master_port, gpus));
    // Kept ranks gone after all: no rank of the new group has its START
    // yet, so none writes there.
    if (in_place && source != GroupSource::kSuspended) storage::clear_unpublished(trial.dir);
  } catch (const std::exception& e) {
    // A group that cannot start fails its trial, not the experiment.
    pool_.release(gpus);
    trial.error = fmt::format("could not start its workers: {}", e.what());
    trials_.transition(trial, TrialPhase::kFailing, trial.error, unix_now());
    log_.log(1, "{} failing: {}", trial.id, trial.error);
    conclude(trial, false);
    return;
  }
  const bool resumed_in_place = in_place && source == GroupSource::kSuspended;
  if (in_place && !resumed_in_place) restart_from_checkpoint(trial);  // its kept ranks were gone
  trial.suspended = false;
  grant_first_leases(trial, trial.iteration);
  if (resumed_in_place) {
    // Each rank waits in report() for the decision on its last iteration.
    Group& group = *groups_.find(trial.id);
    for (size_t r = 0; r < group.ranks.size(); ++r) {
      channel_.bind_peer(group.ranks[r].routing_id, {trial.id, static_cast<int>(r)});
      channel_.send_now(
          group.ranks[r].routing_id,
          protocol::DecisionMsg{trial.iteration, Decision::kContinue, false, trial.continue_through,
                                trial.id, trial.checkpoint_through});
    }
  } else if (source != GroupSource::kLaunched) {
    // Ranks already connected (kept, or a spare) run this one: they hear its
    // START now, before anything else is written.
    Group& group = *groups_.find(trial.id);
    for (size_t r = 0; r < group.ranks.size(); ++r) {
      channel_.bind_peer(group.ranks[r].routing_id, {trial.id, static_cast<int>(r)});
      channel_.send_now(group.ranks[r].routing_id,
                        start_message(trial, static_cast<int>(r), group.master_port));
    }
    record_placements(trial, group);
  }
  announce_run(trial, source);
}

// What every run starts without: its last run's pause, exploit, error and end.
void TrialRuns::reset_run(Trial& trial) {
  trial.pause_at_next_report = trial.error_from_worker = false;
  trial.exploit.reset();
  trial.error.clear();
  trial.end_reason.clear();
}

void TrialRuns::record_placements(const Trial& trial, const Group& group) {
  for (size_t r = 0; r < group.ranks.size(); ++r) {
    store_.add_placement({trial.id, trial.attempt, static_cast<int64_t>(r), group.ranks[r].host,
                          group.ranks[r].step, unix_now()});
  }
}

// The log line and the callbacks of a run that started.
void TrialRuns::announce_run(const Trial& trial, GroupSource source) {
  const bool resumed_in_place = source == GroupSource::kSuspended;
  const bool resuming = trial.checkpoints.latest > 0;
  if (log_.enabled(1)) {
    log_.log(1, "{} RUNNING {}{}{}", trial.id, trial.config.dump(),
             resumed_in_place ? fmt::format(" in place at iteration {}", trial.iteration)
             : resuming       ? fmt::format(" from checkpoint {}", trial.checkpoints.latest)
                              : "",
             source == GroupSource::kKept         ? " (on live idle ranks)"
             : source == GroupSource::kPrestarted ? " (on prestarted ranks)"
             : source == GroupSource::kHandedOver ? " (on ranks it was handed to ahead)"
                                                  : "");
  }
  for (auto& cb : options_.callbacks) cb->on_trial_start(trial.id, trial.config);
}

// Starts a later trial's processes ahead, while others run. A spare that
// cannot start costs nothing but the log line and returns false: the next
// trial launches its own group (and names the error if it fails the same
// way).
bool TrialRuns::start_spare() {
  try {
    const int serial = ++spares_started_;
    groups_.add_spare(serial, spare_launch(launch_, spec_, serial));
    return true;
  } catch (const std::exception& e) {
    log_.log(1, "could not prestart workers: {}", e.what());
    return false;
  }
}

protocol::Start TrialRuns::start_message(const Trial& trial, int rank, int master_port) const {
  const bool resuming = trial.checkpoints.latest > 0;
  return protocol::Start{
      spec_.trainable.name,
      spec_.trainable.library,
      trial.config,
      trial.dir.string(),
      spec_.name,
      spec_.trainable.num_workers,
      resuming ? storage::CheckpointManager::path(trial.dir, trial.checkpoints.latest).string()
               : "",
      trial.checkpoints.latest,
      spec_.trainable.command,
      trial.id,
      trial.attempt,
      master_port,
      (trial.dir / fmt::format("rank_{}.log", rank)).string(),
      !plugins_.scheduler->needs_synchronous_reports(),
      trial.continue_through,
      trial.checkpoint_through};
}

// ---- stopping -------------------------------------------------------------------

// Ends the waiting trials the scheduler gave up on (HyperBand's losers).
void TrialRuns::stop_waiting_trials() {
  for (const std::string& id : plugins_.scheduler->take_trials_to_stop()) {
    Trial* trial = trials_.find(id);
    if (trial == nullptr ||
        (trial->phase != TrialPhase::kPaused && trial->phase != TrialPhase::kPending)) {
      continue;
    }
    if (trial->handed_ahead) {  // its rank starts it: it stops there
      trial->stop_when_started =
          fmt::format("stopped by scheduler {}", plugins_.scheduler->debug_string());
      continue;
    }
    end_waiting_trial(*trial, fmt::format("stopped by scheduler {} at iteration {}",
                                          plugins_.scheduler->debug_string(), trial->iteration));
  }
}

// Ends a PENDING or PAUSED trial as TERMINATED without starting it again.
void TrialRuns::end_waiting_trial(Trial& trial, const std::string& reason) {
  trial.suspended = false;
  groups_.discard_kept(trial.id);
  trials_.transition(trial, TrialPhase::kTerminated, reason, unix_now());
  plugins_.scheduler->on_trial_remove(trial.view());
  plugins_.searcher->on_trial_complete(trial.id, trial.last_result_or_null(), false);
  log_.log(1, "{} TERMINATED while waiting: {}", trial.id, reason);
  for (auto& cb : options_.callbacks) {
    cb->on_trial_complete(trial.id, trial.config, trial.last_result);
  }
}

void TrialRuns::interrupt(const std::string& reason) {
  if (interrupted_) return;
  interrupted_ = true;
  interrupt_reason_ = reason;
  interrupt_deadline_ =
      groups_.now() + std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(options_.interrupt_grace_s));
  trials_.for_each(TrialStatus::kRunning, [&](Trial& trial) {
    if (trial.phase == TrialPhase::kFailing || trial.phase == TrialPhase::kInterrupted) return;
    if (trial.checkpoints.latest > 0) {
      trial.pause_at_next_report = true;
    } else {
      kill_for_interrupt(trial);
    }
  });
}

void TrialRuns::check_interrupt_deadline(Clock::time_point now) {
  if (!interrupt_deadline_ || now < *interrupt_deadline_) return;
  log_.log(0, "trials did not pause within {} s; stopping them", options_.interrupt_grace_s);
  interrupt_deadline_.reset();
  kill_all_running();
}

void TrialRuns::kill_all_running() {
  trials_.for_each(TrialStatus::kRunning, [&](Trial& trial) {
    if (trial.phase != TrialPhase::kInterrupted) kill_for_interrupt(trial);
  });
}

void TrialRuns::kill_for_interrupt(Trial& trial) {
  trials_.transition(trial, TrialPhase::kInterrupted, "interrupted", unix_now());
  groups_.kill(trial.id);
}

void TrialRuns::check_stop_all() {
  if (stop_all_) return;
  for (auto& stopper : plugins_.stoppers) {
    if (!stopper->stop_all()) continue;
    stop_all_ = true;
    stop_all_reason_ = stopper->reason();
    break;
  }
  if (!stop_all_) return;
  searcher_finished_ = true;
  log_.log(1, "stopping all trials: {}", stop_all_reason_);
  // Trials handed ahead are stopped where their ranks start them (run_handed_over).
  for (Trial* trial : waiting()) end_waiting_trial(*trial, stop_all_reason_);
}

bool TrialRuns::finished() const {
  if (interrupted_) return pool_.running() == 0;
  return searcher_finished_ && trials_.all_finished();
}

// ---- what the experiment shows ---------------------------------------------------

namespace {

// How many retired trials the progress table keeps: more than it shows.
constexpr size_t kKeptFinishedRows = 64;

TrialRow row_of(const Trial& t) {
  return {
      t.id,           t.status(),
      t.config,       t.last_result,
      t.iteration,    t.last_result.is_object() ? t.last_result.value("time_total_s", 0.0) : 0.0,
      t.num_failures, t.index};
}

}  // namespace

void TrialRuns::retire_finished() {
  std::vector<Trial> retired = trials_.retire_finished();
  if (retired.empty()) return;
  // Best first, as the progress table ranks them; ties newest first.
  auto better = [&](const TrialRow& a, const TrialRow& b) {
    if (ranks_above(a, b, spec_.metric, spec_.mode)) return true;
    return !ranks_above(b, a, spec_.metric, spec_.mode) && a.index > b.index;
  };
  for (const Trial& t : retired) {
    TrialRow row = row_of(t);
    auto at = std::upper_bound(finished_rows_.begin(), finished_rows_.end(), row, better);
    if (finished_rows_.size() >= kKeptFinishedRows && at == finished_rows_.end()) continue;
    finished_rows_.insert(at, std::move(row));
    if (finished_rows_.size() > kKeptFinishedRows) finished_rows_.pop_back();
  }
}

ProgressSnapshot TrialRuns::snapshot(double elapsed_s) const {
  ProgressSnapshot snap{spec_.name, elapsed_s, spec_.metric, spec_.mode, param_columns_, {}, {}};
  trials_.for_each([&](const Trial& t) { snap.trials.push_back(row_of(t)); });
  for (const TrialRow& r : finished_rows_) snap.trials.push_back(r);
  std::stable_sort(snap.trials.begin(), snap.trials.end(),
                   [](const TrialRow& a, const TrialRow& b) { return a.index < b.index; });
  for (TrialStatus s : {TrialStatus::kTerminated, TrialStatus::kError}) {
    const int64_t shown = std::count_if(snap.trials.begin(), snap.trials.end(),
                                        [&](const TrialRow& r) { return r.status == s; });
    if (trials_.count(s) > shown) snap.omitted[s] = trials_.count(s) - shown;
  }
  return snap;
}

ExperimentSummary TrialRuns::summarize() const {
  ExperimentSummary s;
  s.experiment_dir = spec_.experiment_dir();
  s.num_trials = static_cast<int64_t>(trials_.size());
  s.num_terminated = trials_.count(TrialStatus::kTerminated);
  s.num_errors = trials_.count(TrialStatus::kError);
  s.num_results = num_results_;
  s.interrupted = interrupted_;
  if (auto best = store_.best_trial()) {
    s.best = ExperimentSummary::Best{best->trial.trial_id, best->value, best->trial.config};
  }
  return s;
}

}  // namespace tune
