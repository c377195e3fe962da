// Names shared by the controller, the plug-ins, the store and the wire:
// trial states and scheduler decisions. Enums inside the code; the string
// forms exist only for SQL, TOML, CLI output and logs.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tune::core {

// PENDING -> RUNNING -> (PAUSED -> RUNNING)* -> TERMINATED | ERROR
enum class TrialStatus { kPending, kRunning, kPaused, kTerminated, kError };
// How many TrialStatus values there are, for arrays indexed by status (kError is the last).
inline constexpr size_t kTrialStatusCount = static_cast<size_t>(TrialStatus::kError) + 1;

// What a scheduler (or stopper) decides after a result.
enum class Decision { kContinue, kPause, kStop };

// An experiment's row in the store: RUNNING until the controller ends it
// FINISHED, INTERRUPTED (a signal or fail_fast; resumable) or FAILED (an
// error ended it; resumable).
enum class ExperimentStatus { kRunning, kFinished, kInterrupted, kFailed };

enum class Mode { kMin, kMax };

// One objective of an experiment: a metric of the results and which way is
// better. An experiment has none, one (metric = "loss") or several (metric =
// ["accuracy", "latency_ms"], mode = ["max", "min"]).
struct Objective {
  std::string metric;
  Mode mode = Mode::kMin;

  bool operator==(const Objective&) const = default;
};

// How report() combines a metric over a trial's ranks.
enum class ReduceOp { kMean, kSum, kMin, kMax };

std::string_view to_string(TrialStatus status);
std::string_view to_string(Decision decision);
std::string_view to_string(ExperimentStatus status);
std::string_view to_string(Mode mode);
std::string_view to_string(ReduceOp op);  // "mean", "sum", "min", "max"

std::optional<TrialStatus> trial_status_from_string(std::string_view text);
std::optional<Decision> decision_from_string(std::string_view text);
std::optional<ExperimentStatus> experiment_status_from_string(std::string_view text);
std::optional<Mode> mode_from_string(std::string_view text);
std::optional<ReduceOp> reduce_op_from_string(std::string_view text);

inline bool is_finished(TrialStatus status) {
  return status == TrialStatus::kTerminated || status == TrialStatus::kError;
}

}  // namespace tune::core

namespace tune {
using core::Decision;
using core::decision_from_string;
using core::experiment_status_from_string;
using core::ExperimentStatus;
using core::is_finished;
using core::kTrialStatusCount;
using core::Mode;
using core::mode_from_string;
using core::Objective;
using core::reduce_op_from_string;
using core::ReduceOp;
using core::to_string;
using core::trial_status_from_string;
using core::TrialStatus;
}  // namespace tune
