#include "core/types.h"

#include <array>
#include <utility>

namespace tune::core {
namespace {

constexpr std::array<std::pair<TrialStatus, std::string_view>, kTrialStatusCount> kStatusNames{{
    {TrialStatus::kPending, "PENDING"},
    {TrialStatus::kRunning, "RUNNING"},
    {TrialStatus::kPaused, "PAUSED"},
    {TrialStatus::kTerminated, "TERMINATED"},
    {TrialStatus::kError, "ERROR"},
}};
constexpr std::array<std::pair<Decision, std::string_view>, 3> kDecisionNames{{
    {Decision::kContinue, "CONTINUE"},
    {Decision::kPause, "PAUSE"},
    {Decision::kStop, "STOP"},
}};
constexpr std::array<std::pair<ExperimentStatus, std::string_view>, 4> kExperimentStatusNames{{
    {ExperimentStatus::kRunning, "RUNNING"},
    {ExperimentStatus::kFinished, "FINISHED"},
    {ExperimentStatus::kInterrupted, "INTERRUPTED"},
    {ExperimentStatus::kFailed, "FAILED"},
}};
constexpr std::array<std::pair<Mode, std::string_view>, 2> kModeNames{{
    {Mode::kMin, "min"},
    {Mode::kMax, "max"},
}};
constexpr std::array<std::pair<ReduceOp, std::string_view>, 4> kReduceNames{{
    {ReduceOp::kMean, "mean"},
    {ReduceOp::kSum, "sum"},
    {ReduceOp::kMin, "min"},
    {ReduceOp::kMax, "max"},
}};

template <class Enum, size_t N>
std::string_view name_of(const std::array<std::pair<Enum, std::string_view>, N>& names,
                         Enum value) {
  for (const auto& [e, name] : names) {
    if (e == value) return name;
  }
  return "?";
}

template <class Enum, size_t N>
std::optional<Enum> value_of(const std::array<std::pair<Enum, std::string_view>, N>& names,
                             std::string_view text) {
  for (const auto& [e, name] : names) {
    if (name == text) return e;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(TrialStatus status) { return name_of(kStatusNames, status); }
std::string_view to_string(Decision decision) { return name_of(kDecisionNames, decision); }
std::string_view to_string(ExperimentStatus status) {
  return name_of(kExperimentStatusNames, status);
}
std::string_view to_string(Mode mode) { return name_of(kModeNames, mode); }
std::string_view to_string(ReduceOp op) { return name_of(kReduceNames, op); }

std::optional<TrialStatus> trial_status_from_string(std::string_view text) {
  return value_of(kStatusNames, text);
}
std::optional<Decision> decision_from_string(std::string_view text) {
  return value_of(kDecisionNames, text);
}
std::optional<ExperimentStatus> experiment_status_from_string(std::string_view text) {
  return value_of(kExperimentStatusNames, text);
}
std::optional<Mode> mode_from_string(std::string_view text) { return value_of(kModeNames, text); }
std::optional<ReduceOp> reduce_op_from_string(std::string_view text) {
  return value_of(kReduceNames, text);
}

}  // namespace tune::core
