// TrialPhase: where a trial is in its lifecycle, as one value, with the
// allowed transitions stated once (can_transition). The stored TrialStatus
// (core/types.h) is a function of the phase: the phases between RUNNING and
// its end (stopping, pausing, failing, interrupted) are all RUNNING to a
// user, since the trial's group is still alive.
//
//   PENDING ──► RUNNING ──► STOPPING ──► TERMINATED
//     ▲  │        │  │  └──► PAUSING ──► PAUSED ──► RUNNING ...
//     │  │        │  └─────► INTERRUPTED ─┘ (the experiment is stopping)
//     │  │        └────────► FAILING ──► PENDING (retry) | ERROR
//     │  └─► TERMINATED (ended while waiting)
//     └── ERROR (restart_errored);  ERROR ──► PAUSED (resume_errored)
//   PAUSED ──► ERROR (a PBT clone that failed past max_failures)
#pragma once

#include <string_view>

#include "core/types.h"

namespace tune {

enum class TrialPhase {
  kPending,      // waiting to start: new, or retried after a failure
  kRunning,      // its group runs and reports
  kStopping,     // STOP was sent: the ranks finish with DONE, then TERMINATED
  kPausing,      // PAUSE was sent: the ranks finish with DONE, then PAUSED
  kFailing,      // a rank failed: the group is torn down, then retried or ERROR
  kInterrupted,  // the experiment is stopping: the group was killed, then PAUSED
  kPaused,       // has a checkpoint, waits to resume from it
  kTerminated,   // finished, or stopped by a scheduler or stopper
  kError,        // failed more than max_failures times
};

// The status users see (SQL, CLI) for a phase.
TrialStatus status_of(TrialPhase phase);

// The phase a stored trial is loaded in.
TrialPhase phase_of(TrialStatus status);

// True when a trial may go from `from` to `to`.
bool can_transition(TrialPhase from, TrialPhase to);

// True while the trial's worker group exists (RUNNING to a user).
inline bool has_group(TrialPhase phase) { return status_of(phase) == TrialStatus::kRunning; }

std::string_view to_string(TrialPhase phase);

}  // namespace tune
