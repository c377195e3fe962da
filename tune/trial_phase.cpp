#include "tune/trial_phase.h"

namespace tune {

TrialStatus status_of(TrialPhase phase) {
  switch (phase) {
    case TrialPhase::kPending:
      return TrialStatus::kPending;
    case TrialPhase::kPaused:
      return TrialStatus::kPaused;
    case TrialPhase::kTerminated:
      return TrialStatus::kTerminated;
    case TrialPhase::kError:
      return TrialStatus::kError;
    default:
      return TrialStatus::kRunning;
  }
}

TrialPhase phase_of(TrialStatus status) {
  switch (status) {
    case TrialStatus::kPending:
      return TrialPhase::kPending;
    case TrialStatus::kRunning:
      return TrialPhase::kRunning;
    case TrialStatus::kPaused:
      return TrialPhase::kPaused;
    case TrialStatus::kTerminated:
      return TrialPhase::kTerminated;
    case TrialStatus::kError:
      return TrialPhase::kError;
  }
  return TrialPhase::kPending;
}

bool can_transition(TrialPhase from, TrialPhase to) {
  using P = TrialPhase;
  switch (from) {
    case P::kPending:
      return to == P::kRunning || to == P::kTerminated || to == P::kError;
    case P::kPaused:
      return to == P::kRunning || to == P::kTerminated || to == P::kError;
    case P::kRunning:
      // kPaused directly: a trial stored RUNNING by a controller that died
      // is PAUSED when the experiment resumes.
      return to == P::kStopping || to == P::kPausing || to == P::kFailing ||
             to == P::kInterrupted || to == P::kTerminated || to == P::kPaused;
    case P::kStopping:
      return to == P::kTerminated || to == P::kFailing || to == P::kInterrupted;
    case P::kPausing:
      return to == P::kPaused || to == P::kFailing || to == P::kInterrupted;
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

std::string_view to_string(TrialPhase phase) {
  switch (phase) {
    case TrialPhase::kPending:
      return "PENDING";
    case TrialPhase::kRunning:
      return "RUNNING";
    case TrialPhase::kStopping:
      return "STOPPING";
    case TrialPhase::kPausing:
      return "PAUSING";
    case TrialPhase::kFailing:
      return "FAILING";
    case TrialPhase::kInterrupted:
      return "INTERRUPTED";
    case TrialPhase::kPaused:
      return "PAUSED";
    case TrialPhase::kTerminated:
      return "TERMINATED";
    case TrialPhase::kError:
      return "ERROR";
  }
  return "?";
}

}  // namespace tune
