#include "tune/execution/trial_phase.h"

namespace tune {

namespace {

// Each phase, its name in logs and the status users see, in declaration order.
struct PhaseInfo {
  TrialPhase phase;
  std::string_view name;
  TrialStatus status;
};
constexpr PhaseInfo kPhases[] = {
    {TrialPhase::kPending, "PENDING", TrialStatus::kPending},
    {TrialPhase::kRunning, "RUNNING", TrialStatus::kRunning},
    {TrialPhase::kStopping, "STOPPING", TrialStatus::kRunning},
    {TrialPhase::kPausing, "PAUSING", TrialStatus::kRunning},
    {TrialPhase::kFailing, "FAILING", TrialStatus::kRunning},
    {TrialPhase::kInterrupted, "INTERRUPTED", TrialStatus::kRunning},
    {TrialPhase::kPaused, "PAUSED", TrialStatus::kPaused},
    {TrialPhase::kTerminated, "TERMINATED", TrialStatus::kTerminated},
    {TrialPhase::kError, "ERROR", TrialStatus::kError},
};

const PhaseInfo& info(TrialPhase phase) { return kPhases[static_cast<size_t>(phase)]; }

}  // namespace

TrialStatus status_of(TrialPhase phase) { return info(phase).status; }

// The first phase of a status is the one a stored trial is loaded in.
TrialPhase phase_of(TrialStatus status) {
  for (const auto& p : kPhases) {
    if (p.status == status) return p.phase;
  }
  return TrialPhase::kPending;
}

bool can_transition(TrialPhase from, TrialPhase to) {
  using P = TrialPhase;
  switch (from) {
    case P::kPending:
      return to == P::kRunning || to == P::kTerminated;
    case P::kPaused:
      // kError: a PBT clone that fails past max_failures (no group to tear down).
      return to == P::kRunning || to == P::kTerminated || to == P::kError;
    case P::kRunning:
      // kPaused directly: a trial stored RUNNING by a controller that died
      // is PAUSED when the experiment resumes.
      return to == P::kStopping || to == P::kPausing || to == P::kFailing ||
             to == P::kInterrupted || to == P::kTerminated || to == P::kPaused;
    case P::kStopping:
      return to == P::kTerminated || to == P::kFailing || to == P::kInterrupted;
    case P::kPausing:
      // kPending: an elastic trial that paused to run again with more ranks.
      return to == P::kPaused || to == P::kFailing || to == P::kInterrupted || to == P::kPending;
    case P::kFailing:
      return to == P::kPending || to == P::kError || to == P::kInterrupted;
    case P::kInterrupted:
      return to == P::kPaused;
    case P::kTerminated:
      return false;
    case P::kError:
      return to == P::kPaused || to == P::kPending;  // resume_errored, restart_errored
  }
  return false;
}

std::string_view to_string(TrialPhase phase) { return info(phase).name; }

}  // namespace tune
