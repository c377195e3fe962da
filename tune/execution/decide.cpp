#include "tune/execution/decide.h"

#include <fmt/format.h>

#include <algorithm>

namespace tune {

Decision Action::decision() const {
  switch (kind) {
    case Kind::kContinue:
      return Decision::kContinue;
    case Kind::kPause:
      return Decision::kPause;
    case Kind::kStop:
      return Decision::kStop;
  }
  return Decision::kStop;  // not reached: every kind returns above
}

std::string scheduler_stop_reason(const std::string& reason, const std::string& name,
                                  int64_t iteration) {
  if (reason.empty())
    return fmt::format("stopped by scheduler {} at iteration {}", name, iteration);
  return fmt::format("stopped by scheduler {}, at iteration {}", reason, iteration);
}

Action decide(const ResultVerdicts& v) {
  Decision decision = v.scheduler;
  std::string reason;  // a stopper's or stop_all's; empty: the scheduler's (made only if needed)
  if (v.stopper_reason && decision != Decision::kStop) {
    decision = Decision::kStop;
    reason = *v.stopper_reason;
  }
  if (v.stop_all_reason && decision != Decision::kStop) {
    decision = Decision::kStop;
    reason = *v.stop_all_reason;
  }
  if (v.pause_requested && decision == Decision::kContinue) {
    return {Action::Kind::kPause,
            fmt::format("interrupted; resumes from checkpoint {}", v.checkpoint_iteration)};
  }
  if (decision == Decision::kPause) {
    std::string paused =
        v.checkpoint_iteration > 0
            ? fmt::format("paused by scheduler at iteration {} (checkpoint {})", v.iteration,
                          v.checkpoint_iteration)
            : fmt::format("paused by scheduler at iteration {} (no checkpoint)", v.iteration);
    if (!v.scheduler_reason.empty()) paused += ": " + v.scheduler_reason;
    return {Action::Kind::kPause, paused};
  }
  if (decision == Decision::kStop) {
    if (reason.empty())
      reason = scheduler_stop_reason(v.scheduler_reason, v.scheduler_name, v.iteration);
    return {Action::Kind::kStop, reason};
  }
  return {};
}

std::string paused_from_scratch_reason(const std::string& scheduler_name, int64_t iteration) {
  return fmt::format(
      "paused by scheduler {} at iteration {} without a checkpoint: restarts from scratch when "
      "resumed (report a checkpoint to train::report to resume where it stopped)",
      scheduler_name, iteration);
}

double restart_backoff_s(int64_t failures) {
  constexpr double kFirst = 1, kMost = 60;
  if (failures < 1) return 0;
  return failures > 7 ? kMost : std::min(kMost, kFirst * static_cast<double>(1 << (failures - 1)));
}

EndOutcome judge_end(const GroupEnd& end) {
  const std::string from = end.checkpoint_iteration > 0
                               ? fmt::format("from checkpoint {}", end.checkpoint_iteration)
                               : std::string("from scratch");
  if (end.phase == TrialPhase::kInterrupted) {
    return {TrialPhase::kPaused,
            end.checkpoint_iteration > 0
                ? fmt::format("interrupted; resumes from checkpoint {}", end.checkpoint_iteration)
                : std::string("interrupted; restarts from scratch (no checkpoint)")};
  }
  const bool ok = end.phase != TrialPhase::kFailing && end.all_done;
  if (ok && end.phase == TrialPhase::kPausing) return {TrialPhase::kPaused, end.end_reason};
  if (ok) {
    return {TrialPhase::kTerminated,
            end.phase == TrialPhase::kStopping
                ? end.end_reason
                : fmt::format("completed after {} iteration{}", end.iteration,
                              end.iteration == 1 ? "" : "s")};
  }
  std::string error = end.error;
  if (end.misconfigured) return {TrialPhase::kError, error, true};
  if (end.cluster_fault && !end.experiment_stopping) {
    if (end.cluster_ends_in_row + 1 < kClusterEndsCharged) {
      return {TrialPhase::kPending,
              fmt::format("restarting {} (not counted against max_failures): {}", from, error)};
    }
    error += fmt::format(
        "; the cluster ended {} runs of the trial in a row without a new result, so this one "
        "counts against max_failures",
        kClusterEndsCharged);
  }
  const int64_t failures = end.num_failures + 1;
  if (end.max_failures < 0 && !end.experiment_stopping) {
    return {TrialPhase::kPending,
            fmt::format("restarting after failure {} ({}) in {:g} s: {}", failures, from,
                        restart_backoff_s(failures), error),
            true};
  }
  if (failures <= end.max_failures && !end.experiment_stopping) {
    return {TrialPhase::kPending,
            fmt::format("restarting after failure {} ({}): {}", failures, from, error), true};
  }
  return {TrialPhase::kError, error, true};
}

}  // namespace tune
