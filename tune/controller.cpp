#include "tune/controller.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <thread>
#include <unordered_map>
#include <zmq.hpp>

#include "core/protocol.h"
#include "schedulers/trial_scheduler.h"
#include "search/factory.h"
#include "storage/experiment_store.h"
#include "train/checkpoint_staging.h"
#include "train/worker_env.h"
#include "tune/experiment_lock.h"
#include "tune/gpus.h"
#include "tune/signal_pipe.h"
#include "tune/trial.h"

extern char** environ;

namespace tune {
namespace {

namespace proto = protocol;

// After every rank exited, how long to wait for a DONE or ERROR still in
// flight before judging the group on its exit codes alone.
constexpr auto kSettleTime = std::chrono::milliseconds(500);
// Between SIGTERM to a failed group and SIGKILL.
constexpr auto kKillGrace = std::chrono::seconds(3);
// Messages handled per turn before the loop commits and answers.
constexpr int kMaxMessagesPerTurn = 4096;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The environment every worker inherits: ours, minus the variables the
// controller sets per rank.
std::vector<std::string> base_environment() {
  static const std::vector<std::string_view> kOwn = {
      "TUNERUN_", "RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE="};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view var(*e);
    bool own = false;
    for (auto prefix : kOwn) own = own || var.starts_with(prefix);
    if (!own) env.emplace_back(var);
  }
  return env;
}

// Removes NAME=... from `env`: the controller sets it per rank instead.
void drop_variable(std::vector<std::string>& env, std::string_view name) {
  std::erase_if(env, [&](const std::string& var) {
    return var.size() > name.size() && var.starts_with(name) && var[name.size()] == '=';
  });
}

// `n` GPU ids: the first n this machine lends, then made-up ones ("2", "3"...)
// when [resources] gpus declares more than it finds (as Ray's num_gpus does).
std::vector<std::string> first_gpus(int n) {
  std::vector<std::string> ids = visible_gpus();
  ids.resize(std::min(ids.size(), static_cast<size_t>(n)));
  while (ids.size() < static_cast<size_t>(n)) ids.push_back(std::to_string(ids.size()));
  return ids;
}

// The live ranks of a finished trial, waiting for the next one (reuse_workers).
struct IdleGroup {
  std::vector<Worker> workers;
  pid_t process_group = 0;
  Clock::time_point since;
};

schedulers::TrialView view_of(const Trial& trial) {
  return {trial.id, trial.status, trial.config,
          trial.last_result.is_null() ? nullptr : &trial.last_result, trial.checkpoint_iteration};
}

}  // namespace

class TrialController::Impl {
 public:
  Impl(ExperimentSpec spec, ControllerOptions options)
      : spec_(std::move(spec)), options_(std::move(options)) {
    if (options_.worker_argv.empty()) options_.worker_argv = {self_executable()};
    if (options_.verbosity > 0) progress_ = options_.progress;
    // A command trainable starts its command per trial anyway, and GPUs are
    // bound to a rank's environment at spawn: neither gains from reuse.
    reuse_ = spec_.reuse_workers && spec_.trainable.command.empty() &&
             spec_.trainable.gpus_per_worker == 0;
    for (const auto& [key, domain] : spec_.param_space.searchable_domains()) {
      param_columns_.push_back(key);
    }
    // Workers may start elsewhere (working_dir): every path they get is absolute.
    spec_.storage_path = std::filesystem::absolute(spec_.storage_path);
    if (spec_.total_cpus <= 0) spec_.total_cpus = std::thread::hardware_concurrency();
    cpus_per_trial_ = spec_.trainable.num_workers * spec_.trainable.cpus_per_worker;
    gpus_.emplace(spec_.total_gpus >= 0 ? first_gpus(spec_.total_gpus) : visible_gpus());
    const size_t gpus_per_trial =
        static_cast<size_t>(spec_.trainable.num_workers) * spec_.trainable.gpus_per_worker;
    if (gpus_per_trial > gpus_->size()) {
      throw ConfigError(
          fmt::format("a trial needs {} GPUs ({} workers x {}), but only {} exist{}",
                      gpus_per_trial, spec_.trainable.num_workers, spec_.trainable.gpus_per_worker,
                      gpus_->size(), gpus_->size() == 0 ? " (no /dev/nvidia* device)" : ""),
          {}, 0, "trainable.gpus_per_worker");
    }
    if (cpus_per_trial_ > spec_.total_cpus) {
      throw ConfigError(fmt::format("a trial needs {} CPUs ({} workers x {}), but only {} exist",
                                    cpus_per_trial_, spec_.trainable.num_workers,
                                    spec_.trainable.cpus_per_worker, spec_.total_cpus),
                        {}, 0, "trainable.num_workers");
    }
    searcher_ =
        spec_.custom_searcher
            ? spec_.custom_searcher
            : std::shared_ptr<search::Searcher>(search::make_searcher(
                  spec_.search_algorithm, spec_.search_options, {spec_.num_samples, spec_.seed}));
    searcher_->set_search_properties(spec_.metric, spec_.mode, spec_.param_space);
    scheduler_ = spec_.custom_scheduler
                     ? spec_.custom_scheduler
                     : std::shared_ptr<schedulers::TrialScheduler>(
                           schedulers::make_scheduler(spec_.scheduler, spec_.scheduler_options));
    scheduler_->set_search_properties(spec_.metric, spec_.mode);
    if (!spec_.stop.empty()) stoppers_.push_back(std::make_shared<CriteriaStopper>(spec_.stop));
    stoppers_.insert(stoppers_.end(), spec_.stoppers.begin(), spec_.stoppers.end());
    const bool exists = std::filesystem::exists(spec_.experiment_dir() / "experiment.db");
    if (options_.resume && !exists) {
      throw ConfigError(
          fmt::format("no experiment to resume in {}", spec_.experiment_dir().string()), {}, 0,
          "name");
    }
    if (!options_.resume && exists) {
      throw ConfigError(fmt::format("experiment '{}' already exists in {}; choose another name "
                                    "(--name) or remove it",
                                    spec_.name, spec_.experiment_dir().string()),
                        {}, 0, "name");
    }
  }

  ~Impl() {
    discard_idle_groups();
    for (auto& [id, trial] : trials_) {
      if (trial.status == TrialStatus::kRunning) {
        signal_process_group(trial.process_group, SIGKILL);
        for (auto& w : trial.workers) {
          if (w.process) {
            while (!w.process->try_reap())
              std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        }
      }
    }
  }

  ExperimentSummary run() {
    started_ = Clock::now();
    open();
    while (true) {
      check_stop_all();
      if (!stopping_experiment_ && !stop_all_) {
        create_trials();
        start_trials();
      }
      save_state(false);
      store_->flush();
      send_outbox();
      if (finished()) break;
      if (progress_ && Clock::now() >= progress_->next_due()) progress_->update(snapshot());
      poll_once();
      handle_timers(Clock::now());
    }
    discard_idle_groups();
    save_state(true);
    store_->set_experiment_status(stopping_experiment_ ? "INTERRUPTED" : "FINISHED");
    store_->flush();
    if (progress_) progress_->finish(snapshot());
    if (stopping_experiment_) {
      log(0, "experiment {} stopped ({}); continue it with: tunerun resume {}", spec_.name,
          stop_experiment_reason_, spec_.experiment_dir().string());
    }
    return summarize();
  }

 private:
  // ---- setup -------------------------------------------------------------

  void open() {
    const auto dir = spec_.experiment_dir();
    std::filesystem::create_directories(dir);
    lock_.emplace(dir);
    store_.emplace(storage::ExperimentStore::open(dir));
    if (options_.resume) {
      load();
      store_->set_experiment_status("RUNNING");
    } else {
      const Json stored_spec = {{"sweep", spec_.source},
                                {"sweep_text", spec_.sweep_text},
                                {"sweep_file", spec_.sweep_file}};
      store_->put_experiment(
          {spec_.name, spec_.metric, spec_.mode, stored_spec, unix_now(), "RUNNING"});
    }
    store_->flush();
    if (options_.handle_signals) signals_.emplace();

    router_ = zmq::socket_t(zmq_, zmq::socket_type::router);
    router_.set(zmq::sockopt::linger, 0);
    router_.set(zmq::sockopt::router_mandatory, true);
    router_.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(proto::kMaxMessageBytes));
    router_.bind("tcp://127.0.0.1:*");
    endpoint_ = router_.get(zmq::sockopt::last_endpoint);
    env_ = base_environment();
    if (gpus_->size() > 0) drop_variable(env_, "CUDA_VISIBLE_DEVICES");
    if (spec_.trainable.threads_per_worker > 0) drop_variable(env_, "OMP_NUM_THREADS");
    log(1, "experiment {} in {} (controller at {})", spec_.name, dir.string(), endpoint_);
    if (options_.on_listen) options_.on_listen(endpoint_);
  }

  // Rebuilds the trials, the searcher and the scheduler from the store.
  void load() {
    std::vector<storage::TrialRecord> records = store_->trials();
    std::sort(records.begin(), records.end(),
              [](const auto& a, const auto& b) { return a.trial_index < b.trial_index; });
    for (const auto& r : records) {
      Trial& t = trials_[r.trial_id];
      t.id = r.trial_id;
      t.index = r.trial_index;
      t.config = r.config;
      t.status = r.status;
      t.status_reason = r.status_reason;
      t.dir = r.trial_dir;
      t.created_at = r.created_at;
      t.started_at = r.started_at;
      t.finished_at = r.finished_at;
      t.num_failures = r.num_failures;
      t.attempt = static_cast<int>(r.num_failures);  // every failure was one attempt
      t.error = r.error;
      const auto results = store_->results(t.id);
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
      // Only a checkpoint whose directory exists is one (a crash may have
      // come between a retention delete and its row's commit).
      for (const auto& c : store_->checkpoints(t.id)) {
        if (!std::filesystem::is_directory(c.path)) continue;
        t.checkpoints.emplace_back(c.training_iteration, static_cast<double>(c.training_iteration));
        t.checkpoint_iteration = c.training_iteration;
        for (const auto& result : results) {
          if (result.training_iteration == c.training_iteration) {
            t.checkpoint_time_total_s = result.time_total_s;
          }
        }
      }
      resume_status(t);
      order_.push_back(t.id);
      next_index_ = std::max(next_index_, t.index + 1);
    }
    if (auto state = store_->state("searcher")) searcher_->restore(*state);
    if (auto state = store_->state("scheduler")) scheduler_->restore(*state);
    if (auto state = store_->state("controller")) {
      searcher_finished_ = state->value("searcher_finished", false);
    }
    log(1, "resuming {}: {} trials, {} finished", spec_.name, trials_.size(),
        count(TrialStatus::kTerminated) + count(TrialStatus::kError));
  }

  // What a stored trial becomes when the experiment resumes.
  void resume_status(Trial& t) {
    const std::string from = t.checkpoint_iteration > 0
                                 ? fmt::format("from checkpoint {}", t.checkpoint_iteration)
                                 : std::string("from scratch");
    if (t.status == TrialStatus::kRunning || t.status == TrialStatus::kPaused) {
      change_status(t, TrialStatus::kPaused, "experiment resumed; restarts " + from);
    } else if (t.status == TrialStatus::kError && options_.resume_errored) {
      change_status(t, TrialStatus::kPaused, "resume_errored; restarts " + from);
    } else if (t.status == TrialStatus::kError && options_.restart_errored) {
      t.checkpoint_iteration = 0;
      t.checkpoints.clear();
      change_status(t, TrialStatus::kPending, "restart_errored; restarts from scratch");
    }
  }

  // Writes the searcher's and scheduler's state into the open batch: always
  // when `force`, else at most once a second.
  void save_state(bool force) {
    const auto now = Clock::now();
    if (!force && now - last_state_save_ < std::chrono::seconds(1)) return;
    last_state_save_ = now;
    store_->put_state("searcher", searcher_->save());
    store_->put_state("scheduler", scheduler_->save());
    store_->put_state("controller", {{"searcher_finished", searcher_finished_}});
  }

  // ---- stopping the whole experiment -------------------------------------------

  void on_signal() {
    if (!stopping_experiment_) {
      log(0,
          "interrupted: pausing running trials at their next checkpoint (at most {} s); "
          "interrupt again to stop at once",
          options_.interrupt_grace_s);
      stop_experiment("interrupted");
    } else {
      log(0, "interrupted again: stopping every trial now");
      kill_all_running();
    }
  }

  // Stops launching; trials that have checkpointed pause at their next
  // report, the others are killed. Everything stays resumable.
  void stop_experiment(const std::string& reason) {
    if (stopping_experiment_) return;
    stopping_experiment_ = true;
    stop_experiment_reason_ = reason;
    stop_deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(options_.interrupt_grace_s));
    for (auto& [id, trial] : trials_) {
      if (trial.status != TrialStatus::kRunning || trial.failing) continue;
      if (trial.checkpoint_iteration > 0) {
        trial.pause_requested = true;
      } else {
        kill_for_stop(trial);
      }
    }
  }

  // A stopper's stop_all(): the experiment ends normally (FINISHED). No trial
  // is created or started any more; waiting trials end TERMINATED now,
  // running ones are stopped at their next report (complete_iteration).
  void check_stop_all() {
    if (stop_all_) return;
    for (auto& stopper : stoppers_) {
      if (!stopper->stop_all()) continue;
      stop_all_ = true;
      stop_all_reason_ = stopper->reason();
      break;
    }
    if (!stop_all_) return;
    searcher_finished_ = true;
    log(1, "stopping all trials: {}", stop_all_reason_);
    for (const auto& id : order_) {
      Trial& trial = trials_.at(id);
      if (trial.status == TrialStatus::kPending || trial.status == TrialStatus::kPaused) {
        end_waiting_trial(trial, stop_all_reason_);
      }
    }
  }

  void kill_all_running() {
    for (auto& [id, trial] : trials_) {
      if (trial.status == TrialStatus::kRunning) kill_for_stop(trial);
    }
  }

  void kill_for_stop(Trial& trial) {
    trial.interrupted = true;
    signal_process_group(trial.process_group, SIGKILL);
  }

  // ---- trial creation and start -------------------------------------------

  int count(TrialStatus status) const {
    int n = 0;
    for (const auto& [id, t] : trials_) n += t.status == status;
    return n;
  }

  void create_trials() {
    while (!searcher_finished_ && count(TrialStatus::kPending) < searcher_->max_pending_trials()) {
      const std::string id = fmt::format("{}_{:05d}", spec_.name, next_index_);
      search::Suggestion s = searcher_->suggest(id);
      if (s.status == search::Suggestion::Status::kFinished) {
        searcher_finished_ = true;
        break;
      }
      if (s.status == search::Suggestion::Status::kNotReady) break;
      Trial& trial = trials_[id];
      trial.id = id;
      trial.index = next_index_++;
      trial.config = std::move(s.config);
      trial.dir = spec_.experiment_dir() / "trials" / id;
      trial.created_at = unix_now();
      trial.status_reason = "created";
      order_.push_back(id);
      store_->put_trial(record_of(trial));
      store_->set_trial_status(id, TrialStatus::kPending, "created", trial.created_at);
      scheduler_->on_trial_add(view_of(trial));
      // The trial row and the searcher state that produced it commit
      // together, so a resume never suggests it twice.
      save_state(true);
    }
  }

  // Why no further trial can start now, or empty when one can.
  std::string blocked_reason() const {
    if (spec_.max_concurrent_trials > 0 && running_ >= spec_.max_concurrent_trials) {
      return fmt::format("waiting: max_concurrent_trials={} reached", spec_.max_concurrent_trials);
    }
    const double free = spec_.total_cpus - running_ * cpus_per_trial_;
    if (free + 1e-9 < cpus_per_trial_) {
      return fmt::format("waiting for resources: needs {} CPUs, {} of {} free", cpus_per_trial_,
                         free, spec_.total_cpus);
    }
    const size_t gpus = static_cast<size_t>(spec_.trainable.num_workers) *
                        static_cast<size_t>(spec_.trainable.gpus_per_worker);
    if (gpus_->num_free() < gpus) {
      return fmt::format("waiting for resources: needs {} GPUs, {} of {} free", gpus,
                         gpus_->num_free(), gpus_->size());
    }
    return {};
  }

  // Ends the waiting trials the scheduler gave up on (HyperBand's losers).
  void stop_waiting_trials() {
    for (const std::string& id : scheduler_->take_trials_to_stop()) {
      auto it = trials_.find(id);
      if (it == trials_.end()) continue;
      Trial& trial = it->second;
      if (trial.status != TrialStatus::kPaused && trial.status != TrialStatus::kPending) continue;
      end_waiting_trial(trial, fmt::format("stopped by scheduler {} at iteration {}",
                                           scheduler_->debug_string(), trial.iteration));
    }
  }

  // Ends a PENDING or PAUSED trial as TERMINATED without starting it again.
  void end_waiting_trial(Trial& trial, const std::string& reason) {
    trial.finished_at = unix_now();
    change_status(trial, TrialStatus::kTerminated, reason);
    scheduler_->on_trial_remove(view_of(trial));
    searcher_->on_trial_complete(trial.id,
                                 trial.last_result.is_null() ? nullptr : &trial.last_result, false);
    log(1, "{} TERMINATED while waiting: {}{}", trial.id, reason, metric_suffix(trial));
    for (auto& cb : options_.callbacks)
      cb->on_trial_complete(trial.id, trial.config, trial.last_result);
  }

  void start_trials() {
    stop_waiting_trials();
    while (true) {
      std::vector<Trial*> waiting;
      for (const auto& id : order_) {
        Trial& t = trials_.at(id);
        if (t.status == TrialStatus::kPending || t.status == TrialStatus::kPaused) {
          waiting.push_back(&t);
        }
      }
      if (waiting.empty()) return;
      if (std::string reason = blocked_reason(); !reason.empty()) {
        for (Trial* t : waiting) set_reason(*t, reason);
        return;
      }
      std::vector<schedulers::TrialView> views;
      for (Trial* t : waiting) views.push_back(view_of(*t));
      int pick = scheduler_->choose_trial_to_run(views);
      if (pick < 0 || pick >= static_cast<int>(waiting.size())) {
        if (running_ > 0) {
          for (Trial* t : waiting) set_reason(*t, "waiting: the scheduler chose none");
          return;
        }
        // Nothing runs, so nothing would ever change the scheduler's mind.
        log(1, "warning: scheduler {} chose no trial while none runs; starting {}",
            scheduler_->debug_string(), waiting[0]->id);
        pick = 0;
      }
      Trial& chosen = *waiting[pick];
      if (chosen.status == TrialStatus::kPaused) {
        // Synchronous PBT decides some exploits only now.
        if (auto exploit = scheduler_->take_exploit(chosen.id)) apply_exploit(chosen, *exploit);
      }
      launch(chosen);
    }
  }

  void set_reason(Trial& trial, const std::string& reason) {
    if (trial.status_reason == reason) return;
    trial.status_reason = reason;
    store_->set_trial_status(trial.id, trial.status, reason, unix_now());
  }

  void launch(Trial& trial) {
    std::filesystem::create_directories(trial.dir);
    // Files a previous run staged but never published are not a checkpoint.
    std::filesystem::remove_all(trial.dir / ".staging");
    std::filesystem::remove_all(trial.dir / ".scratch");
    const bool resuming = trial.checkpoint_iteration > 0;
    trial.iteration = trial.checkpoint_iteration;
    trial.time_offset_s = resuming ? trial.checkpoint_time_total_s : 0.0;
    trial.workers.clear();
    trial.pending.clear();
    trial.stopping = trial.pausing = trial.failing = trial.error_from_worker = false;
    trial.pause_requested = trial.interrupted = false;
    trial.exploit.reset();
    trial.error.clear();
    trial.stop_reason.clear();
    trial.settle_deadline.reset();
    trial.kill_deadline.reset();
    trial.process_group = 0;
    const int n = spec_.trainable.num_workers;
    const int threads = spec_.trainable.threads();
    trial.master_port = train::free_loopback_port();
    const int master_port = trial.master_port;
    // With reuse_workers, the ranks of a finished trial run this one if any
    // are idle (their START goes out with the next send); else spawn them.
    const bool reused = reuse_ && adopt_idle_group(trial);
    for (int rank = 0; !reused && rank < n; ++rank) {
      SpawnOptions spawn{options_.worker_argv, env_, trial.dir / fmt::format("rank_{}.log", rank),
                         trial.process_group, spec_.trainable.working_dir};
      spawn.env.push_back(fmt::format("{}=1", train::kEnvWorker));
      spawn.env.push_back(fmt::format("{}={}", train::kEnvController, endpoint_));
      spawn.env.push_back(fmt::format("{}={}", train::kEnvTrialId, trial.id));
      spawn.env.push_back(fmt::format("{}={}", train::kEnvAttempt, trial.attempt));
      spawn.env.push_back(fmt::format("{}={}", train::kEnvParentPid, getpid()));
      spawn.env.push_back(fmt::format("{}={}", train::kEnvHeartbeatS, spec_.heartbeat_period_s));
      if (reuse_) spawn.env.push_back(fmt::format("{}=1", train::kEnvReuse));
      spawn.env.push_back(fmt::format("RANK={}", rank));
      spawn.env.push_back(fmt::format("WORLD_SIZE={}", n));
      spawn.env.push_back("MASTER_ADDR=127.0.0.1");
      spawn.env.push_back(fmt::format("MASTER_PORT={}", master_port));
      // An OMP_NUM_THREADS of the user's wins unless the spec names threads_per_worker.
      if (std::getenv("OMP_NUM_THREADS") == nullptr || spec_.trainable.threads_per_worker > 0) {
        spawn.env.push_back(fmt::format("OMP_NUM_THREADS={}", threads));
      }
      if (gpus_->size() > 0) {
        // Ranks without GPUs get none visible; blocked_reason() made sure enough are free.
        auto ids = gpus_->take(static_cast<size_t>(spec_.trainable.gpus_per_worker));
        spawn.env.push_back(fmt::format("CUDA_VISIBLE_DEVICES={}", fmt::join(*ids, ",")));
        trial.gpus.insert(trial.gpus.end(), ids->begin(), ids->end());
      }
      Worker worker;
      worker.rank = rank;
      worker.last_seen = Clock::now();
      worker.reported = trial.iteration;
      worker.process.emplace(ChildProcess::spawn(spawn));
      if (rank == 0) trial.process_group = worker.process->pid();
      trial.workers.push_back(std::move(worker));
    }
    ++running_;
    trial.started_at = unix_now();
    change_status(trial, TrialStatus::kRunning,
                  resuming ? fmt::format("resumed from checkpoint {}", trial.checkpoint_iteration)
                           : fmt::format("started (attempt {})", trial.attempt));
    log(1, "{} RUNNING {}{}{}", trial.id, trial.config.dump(),
        resuming ? fmt::format(" from checkpoint {}", trial.checkpoint_iteration) : "",
        reused ? " (reusing a finished trial's ranks)" : "");
    for (auto& cb : options_.callbacks) cb->on_trial_start(trial.id, trial.config);
  }

  // ---- the loop --------------------------------------------------------------

  bool finished() const {
    if (stopping_experiment_) return running_ == 0;
    if (!searcher_finished_) return false;
    for (const auto& [id, t] : trials_) {
      if (!is_finished(t.status)) return false;
    }
    return true;
  }

  void poll_once() {
    std::vector<zmq::pollitem_t> items{{router_.handle(), 0, ZMQ_POLLIN, 0}};
    if (signals_) items.push_back({nullptr, signals_->fd(), ZMQ_POLLIN, 0});
    const size_t first_pidfd = items.size();
    std::vector<std::pair<Trial*, Worker*>> owners;
    for (auto& [id, trial] : trials_) {
      if (trial.status != TrialStatus::kRunning) continue;
      for (auto& w : trial.workers) {
        if (w.process && !w.process->exit_status()) {
          items.push_back({nullptr, w.process->pidfd(), ZMQ_POLLIN, 0});
          owners.emplace_back(&trial, &w);
        }
      }
    }
    try {
      zmq::poll(items.data(), items.size(), next_timeout());
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
      return;  // a signal: its byte waits in the signal pipe for the next turn
    }
    if (items[0].revents & ZMQ_POLLIN) drain_router();
    for (size_t i = first_pidfd; i < items.size(); ++i) {
      if (items[i].revents & ZMQ_POLLIN) {
        handle_exit(*owners[i - first_pidfd].first, *owners[i - first_pidfd].second);
      }
    }
    if (signals_ && (items[1].revents & ZMQ_POLLIN)) {
      for (int n = signals_->take(); n > 0; --n) on_signal();
    }
  }

  std::chrono::milliseconds next_timeout() const {
    auto now = Clock::now();
    auto due = now + std::chrono::milliseconds(static_cast<int>(spec_.heartbeat_period_s * 1000));
    for (const auto& [id, t] : trials_) {
      if (t.settle_deadline) due = std::min(due, *t.settle_deadline);
      if (t.kill_deadline) due = std::min(due, *t.kill_deadline);
    }
    if (progress_) due = std::min(due, progress_->next_due());
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(due - now);
    return std::max(wait, std::chrono::milliseconds(0));
  }

  void drain_router() {
    for (int i = 0; i < kMaxMessagesPerTurn; ++i) {
      zmq::message_t identity;
      if (!router_.recv(identity, zmq::recv_flags::dontwait)) return;
      std::vector<zmq::message_t> frames;
      while (router_.get(zmq::sockopt::rcvmore)) {
        frames.emplace_back();
        (void)router_.recv(frames.back(), zmq::recv_flags::none);
      }
      const std::string peer = identity.to_string();
      if (frames.size() != 1) {
        reject(peer, fmt::format("expected one frame, got {}", frames.size()));
        continue;
      }
      try {
        handle_message(peer, proto::decode(frames[0].to_string_view()));
      } catch (const ProtocolError& e) {
        reject(peer, e.what());
      }
    }
  }

  void reject(const std::string& peer, const std::string& reason) {
    ++rejected_;
    log(0, "warning: rejected a control message from peer {:?}: {}", peer_name(peer), reason);
  }

  static std::string peer_name(const std::string& routing_id) {
    std::string hex;
    for (unsigned char c : routing_id) hex += fmt::format("{:02x}", c);
    return hex;
  }

  // ---- messages ------------------------------------------------------------

  void handle_message(const std::string& peer, proto::Message message) {
    if (auto* hello = std::get_if<proto::Hello>(&message)) return on_hello(peer, *hello);
    if (auto* beat = std::get_if<proto::Heartbeat>(&message)) return on_heartbeat(*beat);
    auto it = peers_.find(peer);
    if (it == peers_.end()) {
      throw ProtocolError(
          fmt::format("{} from a peer that has not said HELLO", proto::type_name(message)));
    }
    Trial& trial = trials_.at(it->second.first);
    Worker& worker = trial.workers.at(it->second.second);
    worker.last_seen = Clock::now();
    if (auto* report = std::get_if<proto::Report>(&message))
      return on_report(trial, worker, *report);
    if (std::get_if<proto::Done>(&message)) {
      worker.done = true;
      // Reused ranks stay alive after DONE: the trial ends now, without their exits.
      if (reuse_ && trial.all_done() && !trial.failing && !trial.interrupted) {
        return finalize(trial, /*keep_ranks=*/true);
      }
      return maybe_finalize(trial);
    }
    if (auto* error = std::get_if<proto::ErrorMsg>(&message)) {
      return fail(trial, fmt::format("{}: {}", error->where, error->message), true);
    }
    throw ProtocolError(
        fmt::format("{} is not a worker-to-controller message", proto::type_name(message)));
  }

  Worker* find_worker(const std::string& trial_id, int rank, int attempt, Trial** trial_out) {
    auto it = trials_.find(trial_id);
    if (it == trials_.end()) return nullptr;
    Trial& trial = it->second;
    if (trial.status != TrialStatus::kRunning || trial.attempt != attempt || rank < 0 ||
        rank >= static_cast<int>(trial.workers.size())) {
      return nullptr;
    }
    *trial_out = &trial;
    return &trial.workers[rank];
  }

  void on_hello(const std::string& peer, const proto::Hello& hello) {
    Trial* trial = nullptr;
    Worker* worker = find_worker(hello.trial_id, hello.rank, hello.attempt, &trial);
    if (worker == nullptr) {
      throw ProtocolError(fmt::format("HELLO for trial {} rank {} attempt {}, which is not running",
                                      hello.trial_id, hello.rank, hello.attempt));
    }
    if (!worker->routing_id.empty() || worker->process->pid() != hello.pid) {
      throw ProtocolError(fmt::format("HELLO claims trial {} rank {} (pid {}), already taken",
                                      hello.trial_id, hello.rank, hello.pid));
    }
    worker->routing_id = peer;
    worker->last_seen = Clock::now();
    peers_[peer] = {trial->id, hello.rank};
    queue(peer, start_message(*trial, hello.rank));
  }

  proto::Start start_message(const Trial& trial, int rank) const {
    const bool resuming = trial.checkpoint_iteration > 0;
    return proto::Start{spec_.trainable.name,
                        spec_.trainable.library,
                        trial.config,
                        trial.dir.string(),
                        spec_.name,
                        static_cast<int>(trial.workers.size()),
                        resuming ? checkpoint_path(trial).string() : "",
                        trial.checkpoint_iteration,
                        spec_.trainable.command,
                        trial.id,
                        trial.attempt,
                        trial.master_port,
                        (trial.dir / fmt::format("rank_{}.log", rank)).string()};
  }

  // ---- reused workers (reuse_workers) ----------------------------------------

  // Hands the ranks of an idle group to `trial` and sends them its START;
  // false when no live group is idle (groups idle too long or with a rank
  // gone are killed on the way).
  bool adopt_idle_group(Trial& trial) {
    while (!idle_groups_.empty()) {
      IdleGroup group = std::move(idle_groups_.back());
      idle_groups_.pop_back();
      bool alive = Clock::now() - group.since < kIdleGroupLimit &&
                   group.workers.size() == static_cast<size_t>(spec_.trainable.num_workers);
      for (auto& w : group.workers) alive = alive && !w.process->try_reap();
      if (!alive) {
        discard(group);
        continue;
      }
      trial.process_group = group.process_group;
      trial.workers = std::move(group.workers);
      for (auto& w : trial.workers) {
        w.done = false;
        w.reported = trial.iteration;
        w.last_seen = Clock::now();
        peers_[w.routing_id] = {trial.id, w.rank};
        queue(w.routing_id, start_message(trial, w.rank));
      }
      return true;
    }
    return false;
  }

  // Keeps the ranks of `trial`, which all said DONE, for the next trial.
  void retire_to_idle(Trial& trial) {
    for (const auto& w : trial.workers) peers_.erase(w.routing_id);
    idle_groups_.push_back({std::move(trial.workers), trial.process_group, Clock::now()});
    trial.workers.clear();
  }

  void discard(IdleGroup& group) {
    signal_process_group(group.process_group, SIGKILL);
    for (auto& w : group.workers) {
      while (w.process && !w.process->exit_status() && !w.process->try_reap()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }

  void discard_idle_groups() {
    for (auto& group : idle_groups_) discard(group);
    idle_groups_.clear();
  }

  void on_heartbeat(const proto::Heartbeat& beat) {
    Trial* trial = nullptr;
    // Beats from a group already torn down are expected and harmless.
    if (Worker* worker = find_worker(beat.trial_id, beat.rank, beat.attempt, &trial)) {
      worker->last_seen = Clock::now();
    }
  }

  void on_report(Trial& trial, Worker& worker, const proto::Report& report) {
    if (trial.failing || trial.stopping) return;  // the group is on its way out
    if (report.iteration != worker.reported + 1) {
      throw ProtocolError(fmt::format("{} rank {} reported iteration {} after {}", trial.id,
                                      worker.rank, report.iteration, worker.reported));
    }
    worker.reported = report.iteration;
    PendingIteration& p = trial.pending[report.iteration];
    if (p.metrics.empty()) p.metrics.resize(trial.workers.size());
    ++p.ranks;
    p.metrics[worker.rank] = report.metrics;
    p.checkpoint = p.checkpoint || report.checkpoint;
    if (worker.rank == 0) {
      p.reduce = report.reduce;
      p.time_this_iter_s = report.time_this_iter_s;
      p.time_total_s = report.time_total_s;
    }
    if (p.ranks == static_cast<int>(trial.workers.size())) {
      PendingIteration done = std::move(p);
      trial.pending.erase(report.iteration);
      complete_iteration(trial, report.iteration, std::move(done));
    }
  }

  void complete_iteration(Trial& trial, int64_t iteration, PendingIteration p) {
    const double now = unix_now();
    Json metrics = reduce_metrics(p);
    const double time_total_s = trial.time_offset_s + p.time_total_s;
    Json result = metrics;
    result["training_iteration"] = iteration;
    result["time_this_iter_s"] = p.time_this_iter_s;
    result["time_total_s"] = time_total_s;
    result["timestamp"] = now;
    result["trial_id"] = trial.id;
    if (p.checkpoint) publish(trial, iteration, now, result);
    store_->append_result(
        {trial.id, iteration, now, p.time_this_iter_s, time_total_s, std::move(metrics)});
    ++num_results_;
    trial.iteration = iteration;
    trial.last_result = result;
    searcher_->on_trial_result(trial.id, result);
    for (auto& cb : options_.callbacks) cb->on_trial_result(trial.id, trial.config, result);

    Decision decision = scheduler_->on_trial_result(view_of(trial), result);
    std::string reason = fmt::format("stopped by scheduler {} at iteration {}",
                                     scheduler_->debug_string(), iteration);
    // Every stopper sees every result (stateful ones, e.g. plateau, need
    // them all); a stopper's STOP overrides the scheduler's PAUSE, as in Ray.
    for (auto& stopper : stoppers_) {
      if (stopper->should_stop_trial(trial.id, result) && decision != Decision::kStop) {
        decision = Decision::kStop;
        reason = stopper->reason();
      }
    }
    check_stop_all();
    if (stop_all_ && decision != Decision::kStop) {
      decision = Decision::kStop;
      reason = stop_all_reason_;
    }
    if (trial.pause_requested && decision == Decision::kContinue) {
      // The experiment is stopping: keep this trial's progress for resume.
      decision = Decision::kPause;
      trial.stopping = trial.pausing = true;
      trial.stop_reason =
          fmt::format("interrupted; resumes from checkpoint {}", trial.checkpoint_iteration);
    } else if (decision == Decision::kPause) {
      if (trial.checkpoint_iteration == 0) {
        // Resuming would silently restart from scratch: refuse instead.
        decision = Decision::kStop;
        trial.stopping = true;
        fail(trial,
             fmt::format("scheduler {} paused the trial at iteration {}, but its trainable "
                         "never reported a checkpoint; pausing schedulers need trainables that "
                         "pass a checkpoint to train::report",
                         scheduler_->debug_string(), iteration),
             true);
      } else {
        trial.stopping = trial.pausing = true;
        trial.stop_reason = fmt::format("paused by scheduler at iteration {} (checkpoint {})",
                                        iteration, trial.checkpoint_iteration);
        trial.exploit = scheduler_->take_exploit(trial.id);
      }
    } else if (decision == Decision::kStop) {
      trial.stopping = true;
      trial.stop_reason = reason;
      scheduler_->on_trial_remove(view_of(trial));
    }
    log(2, "{} iteration {}: {}", trial.id, iteration, result.dump());
    for (const auto& w : trial.workers)
      queue(w.routing_id, proto::DecisionMsg{iteration, decision});
  }

  // ---- failures and exits ----------------------------------------------------

  // Starts tearing the group down. `from_worker`: the error is a rank's own
  // ERROR message, which says more than an exit status and replaces one.
  void fail(Trial& trial, const std::string& error, bool from_worker) {
    if (trial.failing) {
      if (from_worker && !trial.error_from_worker) {
        trial.error = error;
        trial.error_from_worker = true;
        maybe_finalize(trial);
      }
      return;
    }
    trial.failing = true;
    trial.error = error;
    trial.error_from_worker = from_worker;
    signal_process_group(trial.process_group, SIGTERM);
    trial.kill_deadline = Clock::now() + kKillGrace;
    log(1, "{} failing: {}", trial.id, error);
    maybe_finalize(trial);
  }

  void handle_exit(Trial& trial, Worker& worker) {
    auto status = worker.process->try_reap();
    if (!status) return;
    // Once the group is failing, a rank killed by a signal was most likely
    // killed by fail()'s SIGTERM: the first error stands.
    if (!status->ok() && !(trial.failing && status->signaled)) {
      fail(trial,
           fmt::format("rank {} {} (log: {})", worker.rank, status->describe(),
                       (trial.dir / fmt::format("rank_{}.log", worker.rank)).string()),
           // A rank killed by a signal has nothing more to say: no need to
           // wait for its ERROR.
           status->signaled);
    }
    maybe_finalize(trial);
  }

  // Finalizes a trial whose ranks have all exited once its outcome is known:
  // every rank said DONE, or a rank said ERROR. Otherwise a DONE or ERROR may
  // still be in flight (ZeroMQ delivers after the exit can be seen): wait
  // kSettleTime for it, then judge by what arrived.
  void maybe_finalize(Trial& trial) {
    if (trial.status != TrialStatus::kRunning || !trial.all_exited()) return;
    trial.kill_deadline.reset();
    if (trial.failing ? trial.error_from_worker : trial.all_done()) {
      finalize(trial);
    } else if (!trial.settle_deadline) {
      trial.settle_deadline = Clock::now() + kSettleTime;
    }
  }

  void handle_timers(Clock::time_point now) {
    if (stopping_experiment_ && stop_deadline_ && now >= *stop_deadline_) {
      log(0, "trials did not pause within {} s; stopping them", options_.interrupt_grace_s);
      stop_deadline_.reset();
      kill_all_running();
    }
    for (auto& [id, trial] : trials_) {
      if (trial.status != TrialStatus::kRunning) continue;
      if (trial.kill_deadline && now >= *trial.kill_deadline) {
        signal_process_group(trial.process_group, SIGKILL);
        trial.kill_deadline.reset();
      }
      if (trial.settle_deadline && now >= *trial.settle_deadline) {
        finalize(trial);
        continue;
      }
      if (trial.failing) continue;
      const auto timeout = std::chrono::duration<double>(spec_.heartbeat_timeout_s);
      for (const auto& w : trial.workers) {
        if (w.process->exit_status() || now - w.last_seen < timeout) continue;
        fail(trial,
             fmt::format("rank {} sent nothing for {:.1f} s (heartbeat timeout)", w.rank,
                         seconds(now - w.last_seen)),
             false);
        signal_process_group(trial.process_group, SIGKILL);  // a stopped process ignores SIGTERM
        break;
      }
    }
  }

  // Ends a RUNNING trial whose outcome is known. `keep_ranks`: every rank
  // said DONE and stays alive for the next trial (reuse_workers); else every
  // rank has exited, and whatever they started (a command trainable's own
  // children) goes with them.
  void finalize(Trial& trial, bool keep_ranks = false) {
    trial.settle_deadline.reset();
    trial.kill_deadline.reset();
    if (keep_ranks) {
      retire_to_idle(trial);
    } else {
      signal_process_group(trial.process_group, SIGKILL);
    }
    for (const auto& w : trial.workers) peers_.erase(w.routing_id);
    --running_;
    gpus_->give_back(trial.gpus);
    trial.gpus.clear();
    trial.finished_at = unix_now();
    const bool ok = keep_ranks || (!trial.failing && trial.all_done());
    if (trial.interrupted) {
      const std::string reason =
          trial.checkpoint_iteration > 0
              ? fmt::format("interrupted; resumes from checkpoint {}", trial.checkpoint_iteration)
              : "interrupted; restarts from scratch (no checkpoint)";
      change_status(trial, TrialStatus::kPaused, reason);
      trial.workers.clear();
      return;
    }
    if (ok && trial.pausing) {
      change_status(trial, TrialStatus::kPaused, trial.stop_reason);
      log(1, "{} PAUSED: {}", trial.id, trial.stop_reason);
      if (trial.exploit) apply_exploit(trial, *trial.exploit);
      trial.workers.clear();
      return;
    }
    if (ok) {
      const std::string reason =
          trial.stopping ? trial.stop_reason
                         : fmt::format("completed after {} iterations", trial.iteration);
      change_status(trial, TrialStatus::kTerminated, reason);
      scheduler_->on_trial_complete(view_of(trial),
                                    trial.last_result.is_null() ? nullptr : &trial.last_result);
      log(1, "{} TERMINATED: {}{}", trial.id, reason, metric_suffix(trial));
      for (auto& cb : options_.callbacks) {
        cb->on_trial_complete(trial.id, trial.config, trial.last_result);
      }
    } else {
      if (trial.error.empty()) {
        for (const auto& w : trial.workers) {
          if (!w.done) {
            trial.error = fmt::format("rank {} {} without reporting DONE", w.rank,
                                      w.process->exit_status()->describe());
            break;
          }
        }
      }
      ++trial.num_failures;
      if ((spec_.max_failures < 0 || trial.num_failures <= spec_.max_failures) &&
          !stopping_experiment_ && !stop_all_) {
        ++trial.attempt;
        change_status(
            trial, TrialStatus::kPending,
            fmt::format("restarting after failure {} ({}): {}", trial.num_failures,
                        trial.checkpoint_iteration > 0
                            ? fmt::format("from checkpoint {}", trial.checkpoint_iteration)
                            : std::string("from scratch"),
                        trial.error));
        log(1, "{} failed ({}); restarting, attempt {}", trial.id, trial.error, trial.attempt);
        trial.workers.clear();
        return;
      }
      change_status(trial, TrialStatus::kError, trial.error);
      if (spec_.fail_fast) stop_experiment(fmt::format("fail_fast: trial {} failed", trial.id));
      scheduler_->on_trial_error(view_of(trial));
      log(1, "{} ERROR: {}", trial.id, trial.error);
      for (auto& cb : options_.callbacks) cb->on_trial_error(trial.id, trial.config, trial.error);
    }
    searcher_->on_trial_complete(trial.id,
                                 trial.last_result.is_null() ? nullptr : &trial.last_result, !ok);
    trial.workers.clear();
  }

  // ---- checkpoints -----------------------------------------------------------

  std::filesystem::path checkpoint_path(const Trial& trial) const {
    return train::detail::checkpoint_dir(trial.dir, trial.checkpoint_iteration);
  }

  // Publishes the files the ranks staged for `iteration` as the trial's
  // checkpoint_<iteration>, before any rank hears the decision.
  void publish(Trial& trial, int64_t iteration, double now, const Json& result) {
    const auto published = train::detail::checkpoint_dir(trial.dir, iteration);
    train::detail::publish_checkpoint(train::detail::staging_dir(trial.dir, iteration), published);
    store_->add_checkpoint({trial.id, iteration, published.string(), now, "report"});
    trial.checkpoint_iteration = iteration;
    trial.checkpoint_time_total_s = result.value("time_total_s", 0.0);
    const std::string& attribute = spec_.checkpoint_score_attribute;
    double score = static_cast<double>(iteration);  // recency
    if (!attribute.empty()) {
      auto it = result.find(attribute);
      score = it != result.end() && it->is_number() ? it->get<double>() : std::nan("");
      if (spec_.checkpoint_score_order == Mode::kMin) score = -score;
    }
    trial.checkpoints.emplace_back(iteration, score);
    apply_retention(trial);
  }

  // Keeps the latest checkpoint (the one a resume needs) and the best
  // num_to_keep - 1 of the others; NaN scores rank last. PBT clones copy
  // the donor's latest at once, so no clone ever needs an older one.
  void apply_retention(Trial& trial) {
    const size_t keep = static_cast<size_t>(spec_.num_to_keep);
    if (keep == 0 || trial.checkpoints.size() <= keep) return;
    auto others = trial.checkpoints;
    others.pop_back();
    std::stable_sort(others.begin(), others.end(), [](const auto& a, const auto& b) {
      return std::isnan(b.second) ? !std::isnan(a.second) : a.second > b.second;
    });
    for (size_t i = keep - 1; i < others.size(); ++i) {
      const int64_t iteration = others[i].first;
      std::filesystem::remove_all(train::detail::checkpoint_dir(trial.dir, iteration));
      store_->remove_checkpoint(trial.id, iteration);
      std::erase_if(trial.checkpoints, [&](const auto& c) { return c.first == iteration; });
    }
  }

  // PBT: the paused `trial` takes the donor's latest checkpoint, iteration
  // count and an explored config; it resumes from there when next started.
  void apply_exploit(Trial& trial, const schedulers::Exploit& exploit) {
    auto donor = trials_.find(exploit.donor_id);
    if (donor == trials_.end() || donor->second.checkpoint_iteration == 0) {
      log(0, "warning: exploit of {} names donor {}, which has no checkpoint; ignored", trial.id,
          exploit.donor_id);
      return;
    }
    const Trial& d = donor->second;
    const int64_t iteration = d.checkpoint_iteration;
    const auto cloned = train::detail::checkpoint_dir(trial.dir, iteration);
    train::detail::clone_checkpoint(checkpoint_path(d), cloned);
    const double now = unix_now();
    store_->add_checkpoint({trial.id, iteration, cloned.string(), now, "clone of " + d.id});
    store_->add_exploit(
        {trial.id, d.id, trial.iteration, iteration, trial.config, exploit.new_config, now});
    log(1, "{} exploits {}: resumes at iteration {} with {}", trial.id, d.id, iteration,
        exploit.new_config.dump());
    if (iteration < trial.iteration) {
      // Rewound to an earlier donor checkpoint: the branch after it is gone.
      store_->remove_results_after(trial.id, iteration);
      for (const auto& [i, score] : trial.checkpoints) {
        if (i <= iteration) continue;
        std::filesystem::remove_all(train::detail::checkpoint_dir(trial.dir, i));
        store_->remove_checkpoint(trial.id, i);
      }
      std::erase_if(trial.checkpoints, [&](const auto& c) { return c.first > iteration; });
    }
    trial.config = exploit.new_config;
    trial.checkpoint_iteration = iteration;
    trial.checkpoint_time_total_s = trial.last_result.value("time_total_s", 0.0);  // its own time
    trial.checkpoints.emplace_back(iteration, std::nan(""));
    set_reason(trial, fmt::format("paused; exploited {} at iteration {}", d.id, iteration));
    store_->put_trial(record_of(trial));
  }

  // Rank 0's metrics, with the metrics named in `reduce` reduced over ranks.
  static Json reduce_metrics(PendingIteration& p) {
    Json metrics = std::move(p.metrics[0]);
    if (!p.reduce.is_object()) return metrics;
    for (const auto& [name, op_json] : p.reduce.items()) {
      const std::string op = op_json.is_string() ? op_json.get<std::string>() : "";
      double acc = 0;
      int n = 0;
      for (size_t rank = 0; rank < p.metrics.size(); ++rank) {
        const Json& m = rank == 0 ? metrics : p.metrics[rank];
        auto it = m.find(name);
        if (it == m.end() || !it->is_number()) continue;
        const double v = it->get<double>();
        acc = n == 0        ? v
              : op == "min" ? std::min(acc, v)
              : op == "max" ? std::max(acc, v)
                            : acc + v;
        ++n;
      }
      if (n > 0) metrics[name] = op == "mean" ? acc / n : acc;
    }
    return metrics;
  }

  std::string metric_suffix(const Trial& trial) const {
    if (spec_.metric.empty() || !trial.last_result.contains(spec_.metric)) return "";
    return fmt::format(", {}={}", spec_.metric, trial.last_result[spec_.metric].dump());
  }

  void change_status(Trial& trial, TrialStatus status, const std::string& reason) {
    trial.status = status;
    trial.status_reason = reason;
    store_->set_trial_status(trial.id, status, reason, unix_now());
    store_->put_trial(record_of(trial));
  }

  storage::TrialRecord record_of(const Trial& t) const {
    storage::TrialRecord r;
    r.trial_id = t.id;
    r.trial_index = t.index;
    r.config = t.config;
    r.status = t.status;
    r.status_reason = t.status_reason;
    r.trial_dir = t.dir.string();
    r.created_at = t.created_at;
    r.started_at = t.started_at;
    r.finished_at = t.finished_at;
    r.last_iteration = t.iteration;
    r.num_failures = t.num_failures;
    r.error = t.status == TrialStatus::kError ? t.error : "";
    return r;
  }

  // ---- replies ---------------------------------------------------------------

  void queue(const std::string& peer, proto::Message message) {
    outbox_.emplace_back(peer, proto::encode(message));
  }

  void send_outbox() {
    for (auto& [peer, bytes] : outbox_) {
      try {
        router_.send(zmq::buffer(peer), zmq::send_flags::sndmore);
        router_.send(zmq::buffer(bytes), zmq::send_flags::none);
      } catch (const zmq::error_t& e) {
        // EHOSTUNREACH: the rank is gone; its exit is handled through its pidfd.
        log(1, "warning: could not answer peer {}: {}", peer_name(peer), e.what());
      }
    }
    outbox_.clear();
  }

  // ---- output ----------------------------------------------------------------

  template <class... Args>
  void log(int level, fmt::format_string<Args...> format, Args&&... args) {
    if (level > options_.verbosity) return;
    const std::string line = fmt::format("[{:8.2f}s] {}", seconds(Clock::now() - started_),
                                         fmt::format(format, std::forward<Args>(args)...));
    if (progress_) {
      progress_->line(line);
    } else {
      fmt::print(stderr, "{}\n", line);
    }
  }

  ProgressSnapshot snapshot() const {
    ProgressSnapshot snap{
        spec_.name, seconds(Clock::now() - started_), spec_.metric, spec_.mode, param_columns_, {}};
    snap.trials.reserve(order_.size());
    for (const auto& id : order_) {
      const Trial& t = trials_.at(id);
      snap.trials.push_back(
          {t.id, t.status, t.config, t.last_result, t.iteration,
           t.last_result.is_object() ? t.last_result.value("time_total_s", 0.0) : 0.0,
           t.num_failures});
    }
    return snap;
  }

  ExperimentSummary summarize() {
    ExperimentSummary s;
    s.experiment_dir = spec_.experiment_dir();
    s.num_trials = static_cast<int64_t>(trials_.size());
    s.num_terminated = count(TrialStatus::kTerminated);
    s.num_errors = count(TrialStatus::kError);
    s.num_results = num_results_;
    s.rejected_messages = rejected_;
    s.wall_s = seconds(Clock::now() - started_);
    s.interrupted = stopping_experiment_;
    if (auto best = store_->best_trial()) {
      s.best = ExperimentSummary::Best{best->trial.trial_id, best->value, best->trial.config};
    }
    return s;
  }

  ExperimentSpec spec_;
  ControllerOptions options_;
  std::shared_ptr<ProgressReporter> progress_;  // options_.progress unless verbosity is 0
  std::vector<std::string> param_columns_;      // the searched keys, for the progress table
  double cpus_per_trial_ = 1;
  std::optional<GpuPool> gpus_;  // the devices trials may hold
  // reuse_workers: the live ranks of finished trials, newest last, waiting
  // for the next trial (function trainables without GPUs only).
  static constexpr auto kIdleGroupLimit = std::chrono::seconds(30);
  bool reuse_ = false;
  std::vector<IdleGroup> idle_groups_;
  std::optional<ExperimentLock> lock_;
  std::optional<SignalPipe> signals_;
  bool stopping_experiment_ = false;
  std::string stop_experiment_reason_;
  std::optional<Clock::time_point> stop_deadline_;
  Clock::time_point last_state_save_;
  std::shared_ptr<search::Searcher> searcher_;
  std::shared_ptr<schedulers::TrialScheduler> scheduler_;
  std::vector<std::shared_ptr<Stopper>> stoppers_;  // spec_.stop's, then spec_.stoppers
  bool stop_all_ = false;                           // a stopper's stop_all() held (check_stop_all)
  std::string stop_all_reason_;
  std::optional<storage::ExperimentStore> store_;

  zmq::context_t zmq_{1};
  zmq::socket_t router_;
  std::string endpoint_;
  std::vector<std::string> env_;

  std::unordered_map<std::string, Trial> trials_;
  std::vector<std::string> order_;  // trial ids in creation order
  std::unordered_map<std::string, std::pair<std::string, int>> peers_;  // routing id -> trial, rank
  std::vector<std::pair<std::string, std::string>> outbox_;
  int64_t next_index_ = 0;
  bool searcher_finished_ = false;
  int running_ = 0;
  int64_t num_results_ = 0;
  int64_t rejected_ = 0;
  Clock::time_point started_;
};

TrialController::TrialController(ExperimentSpec spec, ControllerOptions options)
    : impl_(std::make_unique<Impl>(std::move(spec), std::move(options))) {}

TrialController::~TrialController() = default;

ExperimentSummary TrialController::run() { return impl_->run(); }

}  // namespace tune
