// TrialReports (tune/execution/trial_reports.h): complete iterations become results and decisions.
#include "tune/execution/trial_reports.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/errors.h"
#include "tune/execution/leases.h"

namespace tune {

TrialReports::TrialReports(const TrialParts& parts, const WindDown& wind_down, TrialHooks& hooks,
                           const RunStart& start, const HandAhead& hand_ahead, RunEnds& ends)
    : parts_(parts),
      wind_down_(wind_down),
      hooks_(hooks),
      start_(start),
      hand_ahead_(hand_ahead),
      ends_(ends),
      objectives_(parts.spec.objectives()) {}

void TrialReports::on_report(Trial& trial, int rank, const protocol::Report& report) {
  // A failing group's reports were sent before its failure: a pipelined
  // report can trail a rank's exit. Complete iterations among them are
  // results; nobody waits for their decisions any more.
  const bool failing = trial.phase == TrialPhase::kFailing;
  if (trial.phase != TrialPhase::kRunning && !failing) return;  // stopped: past the end
  auto done = trial.collector.add(rank, report);
  if (!done) return;
  // An elastic trial's results say with how many ranks each was computed.
  if (parts_.spec.trainable.elastic()) done->metrics["world_size"] = trial.world_size;
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
Json TrialReports::result_of(const Trial& trial, const CompleteIteration& done, double now) const {
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
void TrialReports::record_result(Trial& trial, CompleteIteration done, Json result, double now) {
  parts_.store.append_result({trial.id, done.iteration, now, done.time_this_iter_s,
                              trial.time_offset_s + done.time_total_s, std::move(done.metrics)});
  ++num_results_;
  trial.cluster_ends_in_row = 0;
  trial.iteration = done.iteration;
  trial.last_result = std::move(result);
  hooks_.result(trial);
}

// Ray's strict metric checking (ExperimentSpec::strict_metric_checking):
// what is wrong with a result that lacks the experiment's metric or a
// stop criterion's key; empty when nothing is.
std::string TrialReports::missing_keys(const Trial& trial, const CompleteIteration& done,
                                       const Json& row) const {
  if (!parts_.spec.strict_metric_checking) return {};
  std::vector<std::string> metrics;
  for (const Objective& o : objectives_) {
    if (!row.contains(o.metric)) metrics.push_back(fmt::format("`{}`", o.metric));
  }
  std::vector<std::string> stops;
  for (const StopCriterion& c : parts_.spec.stop) {
    if (!row.contains(c.key)) stops.push_back(fmt::format("`{}`", c.key));
  }
  if (metrics.empty() && stops.empty()) return {};
  if (!metrics.empty()) {
    return fmt::format(
        "trial {} returned a result (iteration {}) which did not include the metric(s) {} that "
        "the experiment expects. Make sure the trainable's report() calls include the metric, "
        "or set the TUNE_DISABLE_STRICT_METRIC_CHECKING environment variable to 1. Result: {}",
        trial.id, done.iteration, fmt::join(metrics, ", "), done.metrics.dump());
  }
  std::vector<std::string> keys;
  for (const auto& item : row.items()) keys.push_back(item.key());
  return fmt::format(
      "trial {} returned a result (iteration {}) which did not include the key(s) {} that the "
      "stop criteria name; the result's keys are {}. Fix the stop criterion or report the key, "
      "or set the TUNE_DISABLE_STRICT_METRIC_CHECKING environment variable to 1",
      trial.id, done.iteration, fmt::join(stops, ", "), fmt::join(keys, ", "));
}

void TrialReports::complete_iteration(Trial& trial, CompleteIteration done) {
  const double now = unix_now();
  Json row = result_of(trial, done, now);
  if (std::string missing = missing_keys(trial, done, row); !missing.empty()) {
    // Retrying would report the same keys: it ends in ERROR at once. Its
    // ranks wait for a decision; they are torn down with the trial.
    trial.misconfigured = true;
    return ends_.fail(trial, missing, true);
  }
  if (done.checkpoint) {
    try {
      parts_.checkpoints.publish(trial.id, trial.dir, trial.checkpoints, done.iteration, row, now);
    } catch (const StorageError&) {
      throw;
    } catch (const std::exception& e) {
      // Its ranks wait for a decision; they are torn down with the trial.
      return ends_.fail(trial, e.what(), true);
    }
  }
  const int64_t iteration = done.iteration;
  const bool checkpointed = done.checkpoint;
  const bool awaited = awaits_decision(iteration, trial.continue_through, done.checkpoint);
  record_result(trial, std::move(done), std::move(row), now);
  const Json& result = trial.last_result;

  ResultVerdicts verdicts{iteration,
                          parts_.plugins.scheduler->on_trial_result(trial.view(), result)};
  // Named in the reason of its own stop or pause only (ASHA's is long to make).
  if (verdicts.scheduler != Decision::kContinue) {
    verdicts.scheduler_name = parts_.plugins.scheduler->debug_string();
    verdicts.scheduler_reason = parts_.plugins.scheduler->decision_reason(trial.id);
  }
  // Every stopper sees every result (stateful ones, e.g. plateau, need them all).
  for (auto& stopper : parts_.plugins.stoppers) {
    if (stopper->should_stop_trial(trial.id, result) && !verdicts.stopper_reason) {
      verdicts.stopper_reason = stopper->reason();
    }
  }
  ends_.check_stop_all();
  verdicts.stop_all_reason = wind_down_.stop_all_reason();
  verdicts.pause_requested = trial.pause_at_next_report;
  verdicts.checkpoint_iteration = trial.checkpoints.latest;
  Action action = decide(verdicts);
  if (action.kind == Action::Kind::kContinue && checkpointed && can_grow(trial)) {
    // It runs again from this checkpoint with as many ranks as fit then.
    trial.resizing = true;
    action = {Action::Kind::kPause,
              fmt::format("elastic: more than its {} ranks fit now; resuming from checkpoint {} "
                          "with more",
                          trial.world_size, iteration)};
  }
  if (parts_.log.enabled(2)) {
    parts_.log.log(2, "{} iteration {}: {}", trial.id, iteration, result.dump());
  }
  if (action.kind == Action::Kind::kContinue && !awaited) return;  // nobody waits: nothing to send
  bool suspend = false;
  if (action.kind == Action::Kind::kPause) {
    if (verdicts.scheduler == Decision::kPause) {
      trial.exploit = parts_.plugins.scheduler->take_exploit(trial.id);
    }
    // A pause the trial comes back from unchanged keeps its ranks alive
    // inside report() where groups can be kept: its resume then reloads
    // nothing. Not an exploit's (another checkpoint and config) nor an
    // interrupt's (the run ends). Only ranks that wait on this very
    // iteration can suspend at it, and only ranks that hold no other
    // trial's START.
    suspend = awaited && !trial.exploit && !trial.pause_at_next_report &&
              !wind_down_.interrupted() && parts_.groups.can_keep(true) &&
              !hand_ahead_.ranks_hold_next(trial.id);
    if (!suspend && !trial.exploit && verdicts.scheduler == Decision::kPause &&
        verdicts.checkpoint_iteration == 0) {
      // Its resume restarts it from scratch (RunStart::launch warns then).
      action.reason = paused_from_scratch_reason(verdicts.scheduler_name, iteration);
    }
  }
  const LeaseTerms terms = start_.lease_terms(trial, iteration);
  if (action.kind == Action::Kind::kContinue) {
    trial.continue_through = std::max(trial.continue_through, continue_lease(terms));
  }
  for (const auto& rank : parts_.groups.find(trial.id)->ranks) {
    parts_.channel.queue(rank.routing_id, protocol::DecisionMsg{iteration, action.decision(),
                                                                suspend, trial.continue_through,
                                                                trial.id, checkpoint_lease(terms)});
  }
  ends_.apply(trial, action);
}

// An elastic trial running with fewer ranks than it may grows at a
// checkpoint when ranks fit beside its group now (once re-placed, the group
// holds those too; a STRICT one only when its whole largest size fits
// beside it), and no other trial waits for them.
bool TrialReports::can_grow(const Trial& trial) const {
  const Resources& per_rank = parts_.spec.trainable;
  if (!per_rank.elastic() || trial.world_size >= per_rank.num_workers ||
      wind_down_.winding_down() || parts_.trials.count(TrialStatus::kPending) > 0 ||
      parts_.trials.count(TrialStatus::kPaused) > 0) {
    return false;
  }
  const bool strict = per_rank.placement_strategy == PlacementStrategy::kStrictPack ||
                      per_rank.placement_strategy == PlacementStrategy::kStrictSpread;
  Resources beside = per_rank;
  beside.num_workers = strict ? per_rank.num_workers : per_rank.num_workers - trial.world_size;
  beside.min_workers = 1;
  const int fit = std::min(parts_.pool.ranks_free(), parts_.groups.max_ranks(beside));
  return strict ? fit >= per_rank.num_workers : fit >= 1;
}

}  // namespace tune
