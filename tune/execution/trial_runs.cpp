// TrialRuns (tune/execution/trial_runs.h): starting the trials the scheduler picks,
// and the ranks' messages handed to the part each is for.
#include "tune/execution/trial_runs.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"

namespace tune {

TrialRuns::TrialRuns(ControllerParts parts, WorkerLaunchContext launch)
    : trials_(parts.store),
      checkpoints_(parts.store, {parts.spec.num_to_keep, parts.spec.checkpoint_score_attribute,
                                 parts.spec.checkpoint_score_order}),
      parts_{parts, trials_, checkpoints_},
      hooks_(parts_),
      supply_(parts_, wind_down_),
      start_(parts_, std::move(launch), wind_down_, hooks_),
      hand_ahead_(parts_, start_),
      ends_(parts_, wind_down_, hooks_, start_, hand_ahead_),
      reports_(parts_, wind_down_, hooks_, start_, hand_ahead_, ends_),
      rows_(parts.spec) {}

// ---- starting -------------------------------------------------------------------

void TrialRuns::start_trials() {
  ends_.stop_waiting_trials();
  launch_waiting();
  if (!wind_down_.winding_down()) hand_ahead_.hand_out();
  // Spares only once this turn's launches are done: a trial launched in
  // the same turn cannot take one (it has not connected yet), and one
  // started for nothing costs a process start on the CPUs the trials'
  // own starts need, and is killed at the end, often mid-handshake
  // (logged as refused).
  const bool more_to_start = !supply_.exhausted() || trials_.count(TrialStatus::kPending) > 0 ||
                             trials_.count(TrialStatus::kPaused) > 0;
  while (more_to_start && parts_.groups.wants_spare() && start_.start_spare()) {
  }
}

Clock::time_point TrialRuns::next_restart(Clock::time_point latest) {
  const Clock::time_point now = parts_.groups.now();
  for (const Trial* t : trials_.waiting()) {
    if (t->restart_after > now) latest = std::min(latest, t->restart_after);
  }
  return latest;
}

void TrialRuns::launch_waiting() {
  while (true) {
    std::vector<Trial*> waiting = hand_ahead_.waiting();
    if (waiting.empty()) return;
    std::string reason = parts_.pool.blocked_reason();
    if (reason.empty() && !parts_.groups.can_place(parts_.spec.trainable.smallest())) {
      reason = "waiting: no node has room for its ranks now";
    }
    if (reason.empty() && parts_.groups.connecting_full()) {
      reason = "waiting: the ranks of trials just started are still connecting";
    }
    if (!reason.empty()) {
      for (Trial* t : waiting) trials_.set_reason(*t, reason);
      return;
    }
    std::vector<schedulers::TrialView> views;
    views.reserve(waiting.size());
    for (Trial* t : waiting) views.push_back(t->view());
    int pick = parts_.plugins.scheduler->choose_trial_to_run(views);
    if (pick < 0 || pick >= static_cast<int>(waiting.size())) {
      if (parts_.pool.running() > 0) {
        for (Trial* t : waiting) trials_.set_reason(*t, "waiting: the scheduler chose none");
        return;
      }
      // Nothing runs, so nothing would ever change the scheduler's mind.
      parts_.log.log(1, "warning: scheduler {} chose no trial while none runs; starting {}",
                     parts_.plugins.scheduler->debug_string(), waiting[0]->id);
      pick = 0;
    }
    Trial& chosen = *waiting[pick];
    if (chosen.phase == TrialPhase::kPaused) {
      // Synchronous PBT decides some exploits only now.
      if (auto exploit = parts_.plugins.scheduler->take_exploit(chosen.id)) {
        ends_.apply_exploit(chosen, *exploit);
        if (is_finished(chosen.status())) continue;  // the clone failed it for good
      }
    }
    // A group that cannot start fails its trial, not the experiment.
    if (!start_.launch(chosen)) ends_.conclude(chosen, false);
  }
}

std::vector<std::string> TrialRuns::waiting_trials() {
  std::vector<std::string> ids;
  for (const Trial* t : trials_.waiting()) ids.push_back(t->id);
  return ids;
}

// ---- the ranks' messages ------------------------------------------------------------

void TrialRuns::on_message(const std::string& routing_id, const Peer* peer,
                           protocol::Message& message) {
  if (auto* hello = std::get_if<protocol::Hello>(&message)) {
    return start_.on_hello(routing_id, *hello);
  }
  if (auto* beat = std::get_if<protocol::Heartbeat>(&message)) {
    // Beats from a group already torn down are expected and harmless.
    if (Rank* rank = parts_.groups.find_rank(beat->trial_id, beat->attempt, beat->rank)) {
      rank->last_seen = parts_.groups.now();
    }
    return;
  }
  if (peer == nullptr) {
    throw ProtocolError(
        fmt::format("{} from a peer that has not said HELLO", protocol::type_name(message)));
  }
  Trial* found = trials_.find(peer->trial_id);
  Group* found_group = found != nullptr ? parts_.groups.find(found->id) : nullptr;
  if (found_group == nullptr) {
    throw ProtocolError(fmt::format("{} for trial {}, which is not running",
                                    protocol::type_name(message), peer->trial_id));
  }
  Trial& trial = *found;
  Group& group = *found_group;
  Rank& sender = group.ranks.at(peer->rank);
  sender.last_seen = parts_.groups.now();
  // A rank that said DONE has said all of this trial: what follows is of
  // the trial handed to it ahead, which is not to run (its group goes).
  if (sender.done) return;
  if (auto* report = std::get_if<protocol::Report>(&message)) {
    return reports_.on_report(trial, peer->rank, *report);
  }
  if (auto* done = std::get_if<protocol::Done>(&message)) {
    sender.done = true;
    sender.suspended = done->suspended;
    // Ranks that can be kept stay alive after DONE, waiting for a START:
    // the trial ends now, without their exits; its group is kept (reuse, or
    // for this trial's resume after a pause) or killed.
    const bool ending_well = trial.phase == TrialPhase::kRunning ||
                             trial.phase == TrialPhase::kStopping ||
                             trial.phase == TrialPhase::kPausing;
    if (parts_.groups.ranks_wait_after_done() && group.all_done() && ending_well) {
      return ends_.conclude(trial, parts_.groups.can_keep(trial.phase == TrialPhase::kPausing));
    }
    return ends_.maybe_conclude(trial);
  }
  if (auto* error = std::get_if<protocol::ErrorMsg>(&message)) {
    return ends_.fail(trial, fmt::format("{}: {}", error->where, error->message), true);
  }
  throw ProtocolError(
      fmt::format("{} is not a worker-to-controller message", protocol::type_name(message)));
}

void TrialRuns::fail_peer(const Peer& peer, const std::string& reason) {
  Trial* trial = trials_.find(peer.trial_id);
  if (trial != nullptr && parts_.groups.find(trial->id) != nullptr) {
    ends_.fail(*trial, fmt::format("rank {} broke the control protocol: {}", peer.rank, reason),
               true);
  }
}

// ---- the experiment as a whole ------------------------------------------------------

bool TrialRuns::finished() const {
  if (wind_down_.interrupted()) return parts_.pool.running() == 0;
  return supply_.exhausted() && trials_.all_finished();
}

ExperimentSummary TrialRuns::summarize() const {
  ExperimentSummary s;
  s.experiment_dir = parts_.spec.experiment_dir();
  s.num_trials = static_cast<int64_t>(trials_.size());
  s.num_terminated = trials_.count(TrialStatus::kTerminated);
  s.num_errors = trials_.count(TrialStatus::kError);
  s.num_results = reports_.num_results();
  s.interrupted = wind_down_.interrupted();
  if (auto best = parts_.store.best_trial()) {
    s.best = ExperimentSummary::Best{best->trial.trial_id, best->value, best->trial.config};
  }
  return s;
}

}  // namespace tune
