// continue_lease(), checkpoint_lease() and awaits_decision(): how far ranks
// report without waiting for decisions, without processes.
#include "tune/execution/leases.h"

#include <doctest/doctest.h>

using namespace tune;

namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

// A trial at `iteration` whose scheduler continues it through `scheduler`.
LeaseTerms terms_at(int64_t iteration, int64_t scheduler) {
  LeaseTerms terms;
  terms.iteration = iteration;
  terms.scheduler_through = scheduler;
  return terms;
}

}  // namespace

TEST_CASE("continue_lease: the least of the scheduler's and the stoppers' promises") {
  LeaseTerms terms = terms_at(3, 8);
  CHECK(continue_lease(terms) == 8);  // no stopper bounds it
  terms.stoppers_through = 5;
  CHECK(continue_lease(terms) == 5);
  terms.stoppers_through = 12;
  CHECK(continue_lease(terms) == 8);
  CHECK(continue_lease(terms_at(3, kUnbounded)) == kUnbounded);  // FIFO, no stoppers: never asks
}

TEST_CASE(
    "continue_lease: a synchronous scheduler or a winding-down experiment decides every "
    "report") {
  LeaseTerms terms = terms_at(4, 9);
  terms.synchronous = true;
  CHECK(continue_lease(terms) == 4);
  terms.synchronous = false;
  terms.winding_down = true;
  CHECK(continue_lease(terms) == 4);
}

TEST_CASE("checkpoint_lease: the scheduler's alone, unbounded when it never pauses") {
  LeaseTerms terms = terms_at(2, 6);
  terms.stoppers_through = 3;  // stoppers stop, they never need a checkpoint
  CHECK(checkpoint_lease(terms) == 6);
  terms.winding_down = true;  // an interrupt pauses at the latest checkpoint: it needs no new one
  CHECK(checkpoint_lease(terms) == 6);
  terms.synchronous = true;
  CHECK(checkpoint_lease(terms) == 2);
  terms.scheduler_pauses = false;
  CHECK(checkpoint_lease(terms) == kUnbounded);
}

TEST_CASE("awaits_decision: beyond the lease, or with a checkpoint") {
  CHECK_FALSE(awaits_decision(5, 7, false));
  CHECK_FALSE(awaits_decision(7, 7, false));
  CHECK(awaits_decision(8, 7, false));
  CHECK(awaits_decision(5, 7, true));  // its rank waits for the publish and the decision
}
