// RunEnds (tune/execution/run_ends.h): actions and failures applied, runs concluded,
// PBT's exploits, the interrupt and stop_all acted on.
#include "tune/execution/run_ends.h"

#include <fmt/format.h>

#include <utility>

#include "core/errors.h"

namespace tune {

RunEnds::RunEnds(const TrialParts& parts, WindDown& wind_down, TrialHooks& hooks, RunStart& start,
                 HandAhead& hand_ahead)
    : parts_(parts), wind_down_(wind_down), hooks_(hooks), start_(start), hand_ahead_(hand_ahead) {}

// ---- a run's end begins ------------------------------------------------------------

void RunEnds::apply(Trial& trial, const Action& action) {
  switch (action.kind) {
    case Action::Kind::kContinue:
      return;
    case Action::Kind::kPause:
      parts_.trials.transition(trial, TrialPhase::kPausing, action.reason, unix_now());
      trial.end_reason = action.reason;
      return;
    case Action::Kind::kStop:
      parts_.trials.transition(trial, TrialPhase::kStopping, action.reason, unix_now());
      trial.end_reason = action.reason;
      parts_.plugins.scheduler->on_trial_remove(trial.view());
      return;
  }
}

void RunEnds::fail(Trial& trial, const std::string& error, bool from_worker) {
  if (trial.phase == TrialPhase::kInterrupted) return;  // killed on purpose
  if (trial.phase == TrialPhase::kFailing) {
    if (from_worker && !trial.error_from_worker) {
      trial.error = error;
      trial.error_from_worker = true;
      maybe_conclude(trial);
    }
    return;
  }
  trial.error = error;
  trial.error_from_worker = from_worker;
  parts_.trials.transition(trial, TrialPhase::kFailing, error, unix_now());
  parts_.groups.terminate(trial.id);
  parts_.log.log(1, "{} failing: {}", trial.id, error);
  maybe_conclude(trial);
}

void RunEnds::on_group_event(const GroupEvent& event) {
  Trial* trial = parts_.trials.find(event.trial_id);
  if (trial == nullptr || parts_.groups.find(event.trial_id) == nullptr) return;
  switch (event.kind) {
    case GroupEvent::Kind::kRankExited:
      return on_rank_exit(*trial, event.rank, event.status);
    case GroupEvent::Kind::kSettled:
      if (awaits_node_verdict(*trial)) return parts_.groups.settle(trial->id);
      return conclude(*trial, false);
    case GroupEvent::Kind::kHeld:
      trial->cluster_fault = true;
      return fail(*trial, event.reason, false);
    case GroupEvent::Kind::kHeartbeatMissed: {
      // A rank that never said HELLO is no silent rank: it never connected.
      const bool connected =
          !parts_.groups.find(trial->id)->ranks.at(event.rank).routing_id.empty();
      fail(*trial,
           connected ? fmt::format("rank {} sent nothing for {:.1f} s (heartbeat timeout)",
                                   event.rank, event.silent_s)
                     : fmt::format("rank {} did not connect to the controller within {:.1f} s "
                                   "of its start (heartbeat timeout)",
                                   event.rank, event.silent_s),
           false);
      // A stopped process ignores SIGTERM.
      if (parts_.groups.find(trial->id) != nullptr) parts_.groups.kill(trial->id);
      return;
    }
  }
}

void RunEnds::on_rank_exit(Trial& trial, int rank, const ExitStatus& status) {
  // During an interrupt a rank that dies was most likely ended with the
  // rest (a SIGTERM from Slurm, the allocation's end): the trial pauses at
  // its latest checkpoint, resumable, instead of failing.
  if (!status.ok() && wind_down_.interrupted() && trial.phase != TrialPhase::kFailing &&
      trial.phase != TrialPhase::kInterrupted) {
    parts_.log.log(1, "{}: rank {} {} during the interrupt", trial.id, rank, status.describe());
    kill_for_interrupt(trial);
    return maybe_conclude(trial);
  }
  // Once the group is failing, a rank killed by a signal was most likely
  // killed by fail()'s SIGTERM: the first error stands.
  if (!status.ok() && !(trial.phase == TrialPhase::kFailing && status.signaled)) {
    if (blame_node(trial)) return fail(trial, trial.error, true);
    fail(trial,
         fmt::format("rank {} {} (log: {})", rank, status.describe(),
                     (trial.dir / fmt::format("rank_{}.log", rank)).string()),
         // A rank killed by a signal has nothing more to say: no need to
         // wait for its ERROR.
         status.signaled);
  }
  maybe_conclude(trial);
}

// ---- concluding a run --------------------------------------------------------------

// The outcome is known when every rank said DONE, a rank said ERROR, or the
// group was killed for an interrupt. Otherwise a DONE or ERROR may still be
// in flight (ZeroMQ delivers after the exit can be seen).
void RunEnds::maybe_conclude(Trial& trial) {
  Group* group = parts_.groups.find(trial.id);
  if (group == nullptr || !group->all_exited()) return;
  const bool known =
      trial.phase == TrialPhase::kInterrupted ||
      (trial.phase == TrialPhase::kFailing ? trial.error_from_worker : group->all_done());
  if (known && !awaits_node_verdict(trial)) {
    conclude(trial, false);
  } else {
    parts_.groups.settle(trial.id);
  }
}

// Whether a failed run's end waits for the launcher's word on its nodes (a
// probe step runs on one): a node's failure is not the trial's. At most
// kNodeVerdictWait after the ranks exited.
bool RunEnds::awaits_node_verdict(const Trial& trial) const {
  constexpr auto kNodeVerdictWait = std::chrono::seconds(30);
  const Group* group = parts_.groups.find(trial.id);
  if (group == nullptr || trial.phase == TrialPhase::kInterrupted || group->all_done() ||
      group->processes->nodes_decided()) {
    return false;
  }
  return !group->settle_began || parts_.groups.now() < *group->settle_began + kNodeVerdictWait;
}

// When a node of the trial's group failed under it, that is the run's error.
bool RunEnds::blame_node(Trial& trial) {
  const Group* group = parts_.groups.find(trial.id);
  if (group == nullptr || group->all_done()) return false;
  std::string lost = group->processes->node_failure();
  if (lost.empty()) return false;
  trial.error = std::move(lost);
  trial.cluster_fault = true;
  return true;
}

namespace {

// What the run log says of a restart's count against max_failures.
std::string counted_note(const EndOutcome& outcome, bool cluster_fault) {
  if (!outcome.failure) return " (not counted against max_failures)";
  if (!cluster_fault) return {};
  return fmt::format(
      " (counted against max_failures: the cluster ended {} runs in a row without a new result)",
      kClusterEndsCharged);
}

}  // namespace

// A kept group that was handed a trial ahead runs that one now; one not
// kept gives it back to the waiting trials.
void RunEnds::conclude(Trial& trial, bool keep_ranks) {
  bool all_done = false;
  HandAhead::Next next;  // the trial its ranks were handed ahead, which they run now
  if (Group* group = parts_.groups.find(trial.id)) {
    all_done = group->all_done();
    if (trial.phase != TrialPhase::kInterrupted && !trial.cluster_fault && blame_node(trial)) {
      parts_.log.log(0, "{}: {}", trial.id, trial.error);
    }
    // The cluster ended the run during an interrupt (the allocation's end):
    // no fault of the trial's, which resumes from its checkpoint.
    if (trial.phase == TrialPhase::kFailing && trial.cluster_fault && wind_down_.interrupted()) {
      parts_.trials.transition(trial, TrialPhase::kInterrupted, trial.error, unix_now());
    }
    for (int r = 0; !all_done && trial.error.empty() && r < group->processes->size(); ++r) {
      const auto& exit = group->processes->exit_status(r);
      if (!group->ranks[r].done) {
        trial.error = fmt::format("rank {} {} without reporting DONE", r,
                                  exit ? exit->describe() : std::string("stopped"));
      }
    }
    // Ranks that all exited cleanly without DONE (a Slurm step whose node
    // died ends so) failed all the same.
    if (!all_done && trial.phase != TrialPhase::kFailing &&
        trial.phase != TrialPhase::kInterrupted) {
      parts_.trials.transition(trial, TrialPhase::kFailing, trial.error, unix_now());
    }
    for (const auto& rank : group->ranks) parts_.channel.unbind_peer(rank.routing_id);
    if (hand_ahead_.ranks_hold_next(trial.id)) {
      next = hand_ahead_.take(trial.id, keep_ranks && all_done);
      if (next.trial == nullptr) keep_ranks = false;  // its rank would start the one given back
    }
    if (next.trial != nullptr) {
      trial.suspended = false;
      // Its resources go on with it.
      parts_.groups.hand_over(trial.id, next.trial->id, next.trial->attempt, next.master_port);
    } else {
      trial.suspended = keep_ranks && group->all_suspended();
      parts_.pool.release(parts_.groups.release(trial.id, keep_ranks).gpus);
    }
  }
  EndOutcome outcome = judge_end({.phase = trial.phase,
                                  .all_done = all_done,
                                  .end_reason = trial.end_reason,
                                  .error = trial.error,
                                  .iteration = trial.iteration,
                                  .checkpoint_iteration = trial.checkpoints.latest,
                                  .num_failures = trial.num_failures,
                                  .max_failures = parts_.spec.max_failures,
                                  // An interrupt leaves a failed trial as it
                                  // would be without it (to restart on resume);
                                  // only a stop_all makes its failure final.
                                  .experiment_stopping = wind_down_.stop_all_reason().has_value(),
                                  .cluster_fault = trial.cluster_fault,
                                  .cluster_ends_in_row = trial.cluster_ends_in_row,
                                  .misconfigured = trial.misconfigured});
  // An elastic trial's pause to grow is no pause: it waits to start again.
  if (trial.resizing && outcome.next == TrialPhase::kPaused) {
    outcome = {TrialPhase::kPending, trial.end_reason};
  }
  if (outcome.failure) ++trial.num_failures;
  if (outcome.failure && outcome.next == TrialPhase::kPending) back_off(trial);
  if (trial.cluster_fault) {
    trial.cluster_ends_in_row = outcome.failure ? 0 : trial.cluster_ends_in_row + 1;
  }
  if (outcome.next == TrialPhase::kPending) ++trial.attempt;
  const bool pausing = trial.phase == TrialPhase::kPausing;
  parts_.trials.transition(trial, outcome.next, outcome.reason, unix_now());
  if (pausing && outcome.next == TrialPhase::kPaused) {
    hooks_.paused(trial, outcome.reason);
    if (trial.exploit) apply_exploit(trial, *std::exchange(trial.exploit, std::nullopt));
  } else {
    if (outcome.next == TrialPhase::kPending && trial.resizing) {
      parts_.log.log(1, "{}: {}", trial.id, outcome.reason);
    } else if (outcome.next == TrialPhase::kPending) {
      parts_.log.log(1, "{} failed ({}); restarting, attempt {}{}", trial.id, trial.error,
                     trial.attempt, counted_note(outcome, trial.cluster_fault));
    }
    notify_end(trial);
  }
  if (next.trial != nullptr) run_handed_over(*next.trial, trial.id, next.stop_reason);
}

// Trial `trial`, handed ahead to the ranks of `from`, which just ended, runs
// there now. An interrupt or a stop decided meanwhile ends it as it would
// end a running trial.
void RunEnds::run_handed_over(Trial& trial, const std::string& from,
                              const std::string& stop_reason) {
  start_.begin_handed_over(trial, from);
  if (wind_down_.interrupted()) return kill_for_interrupt(trial);
  const std::string stop = wind_down_.stop_all_reason().value_or(stop_reason);
  if (stop.empty()) return;
  // Its rank applies this at its first report, before sending it.
  for (const auto& rank : parts_.groups.find(trial.id)->ranks) {
    parts_.channel.queue(rank.routing_id, protocol::DecisionMsg{trial.iteration, Decision::kStop,
                                                                false, trial.iteration, trial.id});
  }
  apply(trial, Action{Action::Kind::kStop, stop});
}

// The plug-ins and callbacks hear of a trial's end; an ERROR under
// fail_fast interrupts the experiment first.
void RunEnds::notify_end(Trial& trial) {
  if (trial.phase == TrialPhase::kError && parts_.spec.fail_fast) {
    interrupt(fmt::format("fail_fast: trial {} failed", trial.id));
  }
  hooks_.ended(trial);
}

// ---- PBT ---------------------------------------------------------------------------

void RunEnds::apply_exploit(Trial& trial, const schedulers::Exploit& exploit) {
  Trial* donor = parts_.trials.find(exploit.donor_id);
  if (donor == nullptr || donor->checkpoints.latest == 0) {
    parts_.log.log(0, "warning: exploit of {} names donor {}, which has no checkpoint; ignored",
                   trial.id, exploit.donor_id);
    return;
  }
  const double now = unix_now();
  int64_t at = 0;
  try {
    at = parts_.checkpoints.clone(donor->id, donor->dir, donor->checkpoints, trial.id, trial.dir,
                                  trial.checkpoints, trial.iteration, now);
  } catch (const StorageError&) {
    throw;
  } catch (const std::exception& e) {
    return fail_waiting(trial, fmt::format("exploiting {}: {}", donor->id, e.what()));
  }
  parts_.store.add_exploit(
      {trial.id, donor->id, trial.iteration, at, trial.config, exploit.new_config, now});
  parts_.log.log(1, "{} exploits {}: resumes at iteration {} with {}", trial.id, donor->id, at,
                 exploit.new_config.dump());
  trial.config = exploit.new_config;
  trial.suspended = false;  // its kept ranks, if any, restart from the clone
  trial.checkpoints.latest_time_total_s = trial.last_result.value("time_total_s", 0.0);
  trial.status_reason = fmt::format("paused; exploited {} at iteration {}", donor->id, at);
  parts_.trials.save(trial);
}

// A waiting (PAUSED) trial failed without a group: it keeps its own
// checkpoint and waits again, or ends in ERROR past max_failures.
void RunEnds::back_off(Trial& trial) {
  if (parts_.spec.max_failures >= 0) return;  // a few restarts at once, as in Ray
  const std::chrono::duration<double> wait(restart_backoff_s(trial.num_failures));
  trial.restart_after = parts_.groups.now() + std::chrono::duration_cast<Clock::duration>(wait);
}

void RunEnds::fail_waiting(Trial& trial, const std::string& error) {
  trial.error = error;
  const EndOutcome outcome = judge_end({.phase = TrialPhase::kFailing,
                                        .error = error,
                                        .iteration = trial.iteration,
                                        .checkpoint_iteration = trial.checkpoints.latest,
                                        .num_failures = trial.num_failures,
                                        .max_failures = parts_.spec.max_failures,
                                        .experiment_stopping = wind_down_.winding_down()});
  ++trial.num_failures;
  if (outcome.next == TrialPhase::kPending) back_off(trial);
  trial.suspended = false;
  parts_.groups.discard_kept(trial.id);
  parts_.log.log(1, "{} failed while waiting: {}", trial.id, error);
  if (outcome.next == TrialPhase::kPending) {
    ++trial.attempt;
    parts_.trials.set_reason(trial, outcome.reason);
    parts_.trials.save(trial);
    return;
  }
  parts_.trials.transition(trial, TrialPhase::kError, outcome.reason, unix_now());
  notify_end(trial);
}

// ---- waiting trials and the experiment's end ---------------------------------------

void RunEnds::stop_waiting_trials() {
  for (const std::string& id : parts_.plugins.scheduler->take_trials_to_stop()) {
    Trial* trial = parts_.trials.find(id);
    if (trial == nullptr ||
        (trial->phase != TrialPhase::kPaused && trial->phase != TrialPhase::kPending)) {
      continue;
    }
    const std::string reason =
        scheduler_stop_reason(parts_.plugins.scheduler->decision_reason(id),
                              parts_.plugins.scheduler->debug_string(), trial->iteration);
    // A trial held by the ranks it was handed to stops where they start it.
    if (hand_ahead_.stop_when_started(trial->id, reason)) continue;
    end_waiting_trial(*trial, reason);
  }
}

// Ends a PENDING or PAUSED trial as TERMINATED without starting it again.
void RunEnds::end_waiting_trial(Trial& trial, const std::string& reason) {
  trial.suspended = false;
  parts_.groups.discard_kept(trial.id);
  parts_.trials.transition(trial, TrialPhase::kTerminated, reason, unix_now());
  hooks_.ended_waiting(trial, reason);
}

void RunEnds::interrupt(const std::string& reason) {
  const auto grace = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(parts_.options.interrupt_grace_s));
  if (!wind_down_.interrupt(reason, parts_.groups.now() + grace)) return;
  parts_.trials.for_each(TrialStatus::kRunning, [&](Trial& trial) {
    if (trial.phase == TrialPhase::kFailing || trial.phase == TrialPhase::kInterrupted) return;
    if (trial.checkpoints.latest > 0) {
      trial.pause_at_next_report = true;
    } else {
      kill_for_interrupt(trial);
    }
  });
}

void RunEnds::check_interrupt_deadline(Clock::time_point now) {
  if (!wind_down_.grace_expired(now)) return;
  parts_.log.log(0, "trials did not pause within {} s; stopping them",
                 parts_.options.interrupt_grace_s);
  kill_all_running();
}

void RunEnds::kill_all_running() {
  parts_.trials.for_each(TrialStatus::kRunning, [&](Trial& trial) {
    if (trial.phase != TrialPhase::kInterrupted) kill_for_interrupt(trial);
  });
}

void RunEnds::kill_for_interrupt(Trial& trial) {
  parts_.trials.transition(trial, TrialPhase::kInterrupted, "interrupted", unix_now());
  parts_.groups.kill(trial.id);
}

void RunEnds::check_stop_all() {
  if (!wind_down_.check_stop_all(parts_.plugins.stoppers)) return;
  const std::string& reason = *wind_down_.stop_all_reason();
  parts_.log.log(1, "stopping all trials: {}", reason);
  // Trials handed ahead are stopped where their ranks start them (run_handed_over).
  for (Trial* trial : hand_ahead_.waiting()) end_waiting_trial(*trial, reason);
}

}  // namespace tune
