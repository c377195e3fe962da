// The trial state machine: which phase changes are allowed, and what users
// see of each phase.
#include "tune/execution/trial_phase.h"

#include <doctest/doctest.h>

using namespace tune;
using P = TrialPhase;

TEST_CASE("the phases inside a run are RUNNING to a user") {
  for (P p : {P::kRunning, P::kStopping, P::kPausing, P::kFailing, P::kInterrupted}) {
    CHECK(status_of(p) == TrialStatus::kRunning);
    CHECK(has_group(p));
  }
  CHECK(status_of(P::kPaused) == TrialStatus::kPaused);
  CHECK_FALSE(has_group(P::kPending));
  for (auto s : {TrialStatus::kPending, TrialStatus::kRunning, TrialStatus::kPaused,
                 TrialStatus::kTerminated, TrialStatus::kError}) {
    CHECK(status_of(phase_of(s)) == s);
  }
}

TEST_CASE("the allowed transitions") {
  CHECK(can_transition(P::kPending, P::kRunning));
  CHECK(can_transition(P::kRunning, P::kStopping));
  CHECK(can_transition(P::kStopping, P::kTerminated));
  CHECK(can_transition(P::kRunning, P::kPausing));
  CHECK(can_transition(P::kPausing, P::kPaused));
  CHECK(can_transition(P::kPaused, P::kRunning));
  CHECK(can_transition(P::kRunning, P::kFailing));
  CHECK(can_transition(P::kFailing, P::kPending));
  CHECK(can_transition(P::kFailing, P::kError));
  CHECK(can_transition(P::kStopping, P::kInterrupted));
  CHECK(can_transition(P::kInterrupted, P::kPaused));
  CHECK(can_transition(P::kError, P::kPaused));   // resume_errored
  CHECK(can_transition(P::kError, P::kPending));  // restart_errored
}

TEST_CASE("the forbidden transitions") {
  // A finished trial stays finished; a trial starts only from waiting.
  for (P to : {P::kPending, P::kRunning, P::kPaused, P::kError, P::kTerminated}) {
    CHECK_FALSE(can_transition(P::kTerminated, to));
  }
  CHECK_FALSE(can_transition(P::kPending, P::kPaused));
  CHECK_FALSE(can_transition(P::kPaused, P::kPaused));
  CHECK_FALSE(can_transition(P::kStopping, P::kPaused));      // a STOP is not a pause
  CHECK_FALSE(can_transition(P::kPausing, P::kTerminated));   // nor a pause a stop
  CHECK_FALSE(can_transition(P::kInterrupted, P::kPending));  // interrupts are not failures
  CHECK_FALSE(can_transition(P::kFailing, P::kTerminated));
  CHECK_FALSE(can_transition(P::kError, P::kRunning));
}
