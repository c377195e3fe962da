// TrialRuns, part two: what happens to a running trial: its ranks'
// messages, complete iterations and their decisions, failures, the end of a
// run, and PBT's exploits.
#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"
#include "train/worker_env.h"
#include "tune/leases.h"
#include "tune/trial_runs.h"

namespace tune {

// ---- messages ---------------------------------------------------------------------

void TrialRuns::on_message(const std::string& routing_id, const Peer* peer,
                           protocol::Message& message) {
  if (auto* hello = std::get_if<protocol::Hello>(&message)) return on_hello(routing_id, *hello);
  if (auto* beat = std::get_if<protocol::Heartbeat>(&message)) {
    // Beats from a group already torn down are expected and harmless.
    if (Rank* rank = groups_.find_rank(beat->trial_id, beat->attempt, beat->rank)) {
      rank->last_seen = groups_.now();
    }
    return;
  }
  if (peer == nullptr) {
    throw ProtocolError(
        fmt::format("{} from a peer that has not said HELLO", protocol::type_name(message)));
  }
  Trial* found = trials_.find(peer->trial_id);
  Group* found_group = found != nullptr ? groups_.find(found->id) : nullptr;
  if (found_group == nullptr) {
    throw ProtocolError(fmt::format("{} for trial {}, which is not running",
                                    protocol::type_name(message), peer->trial_id));
  }
  Trial& trial = *found;
  Group& group = *found_group;
  Rank& sender = group.ranks.at(peer->rank);
  sender.last_seen = groups_.now();
  // A rank that said DONE has said all of this trial: what follows is of
  // the trial handed to it ahead, which is not to run (its group goes).
  if (sender.done) return;
  if (auto* report = std::get_if<protocol::Report>(&message)) {
    return on_report(trial, peer->rank, *report);
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
    if (groups_.ranks_wait_after_done() && group.all_done() && ending_well) {
      return conclude(trial, groups_.can_keep(trial.phase == TrialPhase::kPausing));
    }
    return maybe_conclude(trial);
  }
  if (auto* error = std::get_if<protocol::ErrorMsg>(&message)) {
    return fail(trial, fmt::format("{}: {}", error->where, error->message), true);
  }
  throw ProtocolError(
      fmt::format("{} is not a worker-to-controller message", protocol::type_name(message)));
}

void TrialRuns::on_hello(const std::string& routing_id, const protocol::Hello& hello) {
  if (hello.trial_id == train::kSpareTrialId) {
    // A prestarted rank: it waits, unbound, until a trial takes its group.
    if (!groups_.spare_hello(hello.attempt, hello.rank, hello.pid,
                             Rank{.routing_id = routing_id,
                                  .host = hello.host,
                                  .step = hello.step,
                                  .last_seen = groups_.now()})) {
      throw ProtocolError(fmt::format("HELLO of spare rank {} (pid {}), which is not expected",
                                      hello.rank, hello.pid));
    }
    return;
  }
  Rank* rank = groups_.find_rank(hello.trial_id, hello.attempt, hello.rank);
  if (rank == nullptr) {
    throw ProtocolError(fmt::format("HELLO for trial {} rank {} attempt {}, which is not running",
                                    hello.trial_id, hello.rank, hello.attempt));
  }
  const Group& group = *groups_.find(hello.trial_id);
  const int64_t pid = group.processes->pid(hello.rank);
  if (!rank->routing_id.empty() || (pid != 0 && pid != hello.pid)) {
    throw ProtocolError(fmt::format("HELLO claims trial {} rank {} (pid {}), already taken",
                                    hello.trial_id, hello.rank, hello.pid));
  }
  rank->routing_id = routing_id;
  rank->host = hello.host;
  rank->step = hello.step;
  rank->last_seen = groups_.now();
  store_.add_placement(
      {hello.trial_id, hello.attempt, hello.rank, hello.host, hello.step, unix_now()});
  channel_.bind_peer(routing_id, {hello.trial_id, hello.rank});
  channel_.send_now(routing_id,
                    start_message(*trials_.find(hello.trial_id), hello.rank, group.master_port));
}

void TrialRuns::fail_peer(const Peer& peer, const std::string& reason) {
  Trial* trial = trials_.find(peer.trial_id);
  if (trial != nullptr && groups_.find(trial->id) != nullptr) {
    fail(*trial, fmt::format("rank {} broke the control protocol: {}", peer.rank, reason), true);
  }
}

// ---- results ------------------------------------------------------------------------

void TrialRuns::on_report(Trial& trial, int rank, const protocol::Report& report) {
  // A failing group's reports were sent before its failure: a pipelined
  // report can trail a rank's exit. Complete iterations among them are
  // results; nobody waits for their decisions any more.
  const bool failing = trial.phase == TrialPhase::kFailing;
  if (trial.phase != TrialPhase::kRunning && !failing) return;  // stopped: past the end
  auto done = trial.collector.add(rank, report);
  if (!done) return;
  if (failing) {
    // Its checkpoint is not published: restarts go on from the last one.
    const double now = unix_now();
    Json result = result_of(trial, *done, now);
    record_result(trial, std::move(*done), std::move(result), now);
    return;
  }
  complete_iteration(trial, std::move(*done));
}

// The result row of a complete iteration: its metrics and the automatic keys.
Json TrialRuns::result_of(const Trial& trial, const CompleteIteration& done, double now) const {
  Json result = done.metrics;
  result["training_iteration"] = done.iteration;
  result["time_this_iter_s"] = done.time_this_iter_s;
  result["time_total_s"] = trial.time_offset_s + done.time_total_s;
  result["timestamp"] = now;
  result["trial_id"] = trial.id;
  return result;
}

// Appends the result to the store's batch; it becomes the trial's
// last_result, and the searcher and callbacks see it.
void TrialRuns::record_result(Trial& trial, CompleteIteration done, Json result, double now) {
  store_.append_result({trial.id, done.iteration, now, done.time_this_iter_s,
                        trial.time_offset_s + done.time_total_s, std::move(done.metrics)});
  ++num_results_;
  trial.iteration = done.iteration;
  trial.last_result = std::move(result);
  plugins_.searcher->on_trial_result(trial.id, trial.last_result);
  for (auto& cb : options_.callbacks) {
    cb->on_trial_result(trial.id, trial.config, trial.last_result);
  }
}

void TrialRuns::complete_iteration(Trial& trial, CompleteIteration done) {
  const double now = unix_now();
  Json row = result_of(trial, done, now);
  if (done.checkpoint) {
    try {
      checkpoints_.publish(trial.id, trial.dir, trial.checkpoints, done.iteration, row, now);
    } catch (const StorageError&) {
      throw;
    } catch (const std::exception& e) {
      // Its ranks wait for a decision; they are torn down with the trial.
      return fail(trial, e.what(), true);
    }
  }
  const int64_t iteration = done.iteration;
  const bool awaited = awaits_decision(iteration, trial.continue_through, done.checkpoint);
  record_result(trial, std::move(done), std::move(row), now);
  const Json& result = trial.last_result;

  ResultVerdicts verdicts{iteration, plugins_.scheduler->on_trial_result(trial.view(), result)};
  // Named in the reason of its own stop or pause only (ASHA's is long to make).
  if (verdicts.scheduler != Decision::kContinue) {
    verdicts.scheduler_name = plugins_.scheduler->debug_string();
  }
  // Every stopper sees every result (stateful ones, e.g. plateau, need them all).
  for (auto& stopper : plugins_.stoppers) {
    if (stopper->should_stop_trial(trial.id, result) && !verdicts.stopper_reason) {
      verdicts.stopper_reason = stopper->reason();
    }
  }
  check_stop_all();
  if (stop_all_) verdicts.stop_all_reason = stop_all_reason_;
  verdicts.pause_requested = trial.pause_at_next_report;
  verdicts.checkpoint_iteration = trial.checkpoints.latest;
  const Action action = decide(verdicts);
  if (log_.enabled(2)) log_.log(2, "{} iteration {}: {}", trial.id, iteration, result.dump());
  if (action.kind == Action::Kind::kContinue && !awaited) return;  // nobody waits: nothing to send
  bool suspend = false;
  if (action.kind == Action::Kind::kPause) {
    if (verdicts.scheduler == Decision::kPause) {
      trial.exploit = plugins_.scheduler->take_exploit(trial.id);
    }
    // A pause the trial comes back from unchanged keeps its ranks alive
    // inside report() where groups can be kept: its resume then reloads
    // nothing. Not an exploit's (another checkpoint and config) nor an
    // interrupt's (the run ends). Only ranks that wait on this very
    // iteration can suspend at it.
    // Nor ranks that hold the next trial's START.
    suspend = awaited && !trial.exploit && !trial.pause_at_next_report && !interrupted_ &&
              groups_.can_keep(true) && groups_.find(trial.id)->next_trial.empty();
  }
  const LeaseTerms terms = lease_terms(trial, iteration);
  if (action.kind == Action::Kind::kContinue) {
    trial.continue_through = std::max(trial.continue_through, continue_lease(terms));
  }
  for (const auto& rank : groups_.find(trial.id)->ranks) {
    channel_.queue(rank.routing_id, protocol::DecisionMsg{iteration, action.decision(), suspend,
                                                          trial.continue_through, trial.id,
                                                          checkpoint_lease(terms)});
  }
  apply(trial, action);
}

void TrialRuns::grant_first_leases(Trial& trial, int64_t start_iteration) const {
  // Reports the scheduler lets continue whatever they say do not wait.
  const LeaseTerms terms = lease_terms(trial, start_iteration);
  trial.continue_through = continue_lease(terms);
  trial.checkpoint_through = checkpoint_lease(terms);
}

LeaseTerms TrialRuns::lease_terms(const Trial& trial, int64_t iteration) const {
  const schedulers::TrialScheduler& scheduler = *plugins_.scheduler;
  LeaseTerms terms{.iteration = iteration,
                   .synchronous = scheduler.needs_synchronous_reports(),
                   .scheduler_pauses = scheduler.pauses_trials(),
                   .winding_down = winding_down(),
                   .scheduler_through = scheduler.continues_through(trial.view(), iteration)};
  for (const auto& stopper : plugins_.stoppers) {
    terms.stoppers_through =
        std::min(terms.stoppers_through, stopper->continues_through(trial.id, iteration));
  }
  return terms;
}

void TrialRuns::apply(Trial& trial, const Action& action) {
  switch (action.kind) {
    case Action::Kind::kContinue:
      return;
    case Action::Kind::kPause:
      trials_.transition(trial, TrialPhase::kPausing, action.reason, unix_now());
      trial.end_reason = action.reason;
      return;
    case Action::Kind::kStop:
      trials_.transition(trial, TrialPhase::kStopping, action.reason, unix_now());
      trial.end_reason = action.reason;
      plugins_.scheduler->on_trial_remove(trial.view());
      return;
    case Action::Kind::kFail:
      return fail(trial, action.reason, true);
  }
}

// ---- failures and ends ------------------------------------------------------------

// Starts tearing the group down. `from_worker`: the error is a rank's own
// ERROR message, which says more than an exit status and replaces one.
void TrialRuns::fail(Trial& trial, const std::string& error, bool from_worker) {
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
  trials_.transition(trial, TrialPhase::kFailing, error, unix_now());
  groups_.terminate(trial.id);
  log_.log(1, "{} failing: {}", trial.id, error);
  maybe_conclude(trial);
}

void TrialRuns::on_group_event(const GroupEvent& event) {
  Trial* trial = trials_.find(event.trial_id);
  if (trial == nullptr || groups_.find(event.trial_id) == nullptr) return;
  switch (event.kind) {
    case GroupEvent::Kind::kRankExited:
      return on_rank_exit(*trial, event.rank, event.status);
    case GroupEvent::Kind::kSettled:
      return conclude(*trial, false);
    case GroupEvent::Kind::kHeartbeatMissed:
      fail(*trial,
           fmt::format("rank {} sent nothing for {:.1f} s (heartbeat timeout)", event.rank,
                       event.silent_s),
           false);
      // A stopped process ignores SIGTERM.
      if (groups_.find(trial->id) != nullptr) groups_.kill(trial->id);
      return;
  }
}

void TrialRuns::on_rank_exit(Trial& trial, int rank, const ExitStatus& status) {
  // Once the group is failing, a rank killed by a signal was most likely
  // killed by fail()'s SIGTERM: the first error stands.
  if (!status.ok() && !(trial.phase == TrialPhase::kFailing && status.signaled)) {
    fail(trial,
         fmt::format("rank {} {} (log: {})", rank, status.describe(),
                     (trial.dir / fmt::format("rank_{}.log", rank)).string()),
         // A rank killed by a signal has nothing more to say: no need to
         // wait for its ERROR.
         status.signaled);
  }
  maybe_conclude(trial);
}

// Concludes a run whose ranks have all exited once its outcome is known:
// every rank said DONE, a rank said ERROR, or the group was killed for an
// interrupt. Otherwise a DONE or ERROR may still be in flight (ZeroMQ
// delivers after the exit can be seen): the group settles for a while.
void TrialRuns::maybe_conclude(Trial& trial) {
  Group* group = groups_.find(trial.id);
  if (group == nullptr || !group->all_exited()) return;
  const bool known =
      trial.phase == TrialPhase::kInterrupted ||
      (trial.phase == TrialPhase::kFailing ? trial.error_from_worker : group->all_done());
  if (known) {
    conclude(trial, false);
  } else {
    groups_.settle(trial.id);
  }
}

// Ends the run of `trial`. `keep_ranks`: every rank said DONE and stays
// alive for the next trial (reuse_workers); else the group is killed. A
// kept group that was handed a trial ahead runs that one now; one not kept
// gives it back to the waiting trials.
void TrialRuns::conclude(Trial& trial, bool keep_ranks) {
  bool all_done = false;
  Trial* handed = nullptr;  // the trial its ranks were handed ahead, which they run now
  if (Group* group = groups_.find(trial.id)) {
    all_done = group->all_done();
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
      trials_.transition(trial, TrialPhase::kFailing, trial.error, unix_now());
    }
    for (const auto& rank : group->ranks) channel_.unbind_peer(rank.routing_id);
    if (!group->next_trial.empty()) {
      Trial* next = trials_.find(group->next_trial);
      if (keep_ranks && all_done && next != nullptr && next->handed_ahead &&
          next->phase == TrialPhase::kPending) {
        handed = next;
      } else {
        take_back_handed(*group);
        keep_ranks = false;  // its rank would start that trial
      }
    }
    if (handed != nullptr) {
      trial.suspended = false;
      groups_.hand_over(trial.id, handed->attempt);  // its resources go on with it
    } else {
      trial.suspended = keep_ranks && group->all_suspended();
      pool_.release(groups_.release(trial.id, keep_ranks).gpus);
    }
  }
  const EndOutcome outcome = judge_end({.phase = trial.phase,
                                        .all_done = all_done,
                                        .end_reason = trial.end_reason,
                                        .error = trial.error,
                                        .iteration = trial.iteration,
                                        .checkpoint_iteration = trial.checkpoints.latest,
                                        .num_failures = trial.num_failures,
                                        .max_failures = spec_.max_failures,
                                        .experiment_stopping = interrupted_ || stop_all_});
  if (outcome.failure) ++trial.num_failures;
  if (outcome.next == TrialPhase::kPending) ++trial.attempt;
  const bool pausing = trial.phase == TrialPhase::kPausing;
  trials_.transition(trial, outcome.next, outcome.reason, unix_now());
  if (pausing && outcome.next == TrialPhase::kPaused) {
    log_.log(1, "{} PAUSED: {}", trial.id, outcome.reason);
    plugins_.searcher->on_trial_pause(trial.id);
    if (trial.exploit) apply_exploit(trial, *std::exchange(trial.exploit, std::nullopt));
  } else {
    if (outcome.next == TrialPhase::kPending) {
      log_.log(1, "{} failed ({}); restarting, attempt {}", trial.id, trial.error, trial.attempt);
    }
    notify_end(trial);
  }
  if (handed != nullptr) run_handed_over(*handed, trial.id);
}

// Tells the plug-ins and callbacks that `trial` reached the end it is in.
void TrialRuns::notify_end(Trial& trial) {
  if (trial.phase == TrialPhase::kTerminated) {
    plugins_.scheduler->on_trial_complete(trial.view(), trial.last_result_or_null());
    std::string metric;
    if (!spec_.metric.empty() && trial.last_result.contains(spec_.metric)) {
      metric = fmt::format(", {}={}", spec_.metric, trial.last_result[spec_.metric].dump());
    }
    log_.log(1, "{} TERMINATED: {}{}", trial.id, trial.status_reason, metric);
    for (auto& cb : options_.callbacks) {
      cb->on_trial_complete(trial.id, trial.config, trial.last_result);
    }
  } else if (trial.phase == TrialPhase::kError) {
    if (spec_.fail_fast) interrupt(fmt::format("fail_fast: trial {} failed", trial.id));
    plugins_.scheduler->on_trial_error(trial.view());
    log_.log(1, "{} ERROR: {}", trial.id, trial.error);
    for (auto& cb : options_.callbacks) cb->on_trial_error(trial.id, trial.config, trial.error);
  } else {
    return;  // paused or retried: not an end
  }
  plugins_.searcher->on_trial_complete(trial.id, trial.last_result_or_null(),
                                       trial.phase == TrialPhase::kError);
}

// ---- PBT -------------------------------------------------------------------------------

// The paused `trial` takes the donor's latest checkpoint, iteration count
// and an explored config; it resumes from there when next started.
void TrialRuns::apply_exploit(Trial& trial, const schedulers::Exploit& exploit) {
  Trial* donor = trials_.find(exploit.donor_id);
  if (donor == nullptr || donor->checkpoints.latest == 0) {
    log_.log(0, "warning: exploit of {} names donor {}, which has no checkpoint; ignored", trial.id,
             exploit.donor_id);
    return;
  }
  const double now = unix_now();
  int64_t at = 0;
  try {
    at = checkpoints_.clone(donor->id, donor->dir, donor->checkpoints, trial.id, trial.dir,
                            trial.checkpoints, trial.iteration, now);
  } catch (const StorageError&) {
    throw;
  } catch (const std::exception& e) {
    return fail_waiting(trial, fmt::format("exploiting {}: {}", donor->id, e.what()));
  }
  store_.add_exploit(
      {trial.id, donor->id, trial.iteration, at, trial.config, exploit.new_config, now});
  log_.log(1, "{} exploits {}: resumes at iteration {} with {}", trial.id, donor->id, at,
           exploit.new_config.dump());
  trial.config = exploit.new_config;
  trial.suspended = false;  // its kept ranks, if any, restart from the clone
  trial.checkpoints.latest_time_total_s = trial.last_result.value("time_total_s", 0.0);
  trial.status_reason = fmt::format("paused; exploited {} at iteration {}", donor->id, at);
  trials_.save(trial);
}

// A waiting (PAUSED) trial failed without a group: it keeps its own
// checkpoint and waits again, or ends in ERROR past max_failures.
void TrialRuns::fail_waiting(Trial& trial, const std::string& error) {
  trial.error = error;
  const EndOutcome outcome = judge_end({.phase = TrialPhase::kFailing,
                                        .error = error,
                                        .iteration = trial.iteration,
                                        .checkpoint_iteration = trial.checkpoints.latest,
                                        .num_failures = trial.num_failures,
                                        .max_failures = spec_.max_failures,
                                        .experiment_stopping = interrupted_ || stop_all_});
  ++trial.num_failures;
  trial.suspended = false;
  groups_.discard_kept(trial.id);
  log_.log(1, "{} failed while waiting: {}", trial.id, error);
  if (outcome.next == TrialPhase::kPending) {
    ++trial.attempt;
    trials_.set_reason(trial, outcome.reason);
    trials_.save(trial);
    return;
  }
  trials_.transition(trial, TrialPhase::kError, outcome.reason, unix_now());
  notify_end(trial);
}

}  // namespace tune
