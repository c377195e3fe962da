// Leases: how far the ranks of a running trial may report without waiting
// for a decision, and through which iteration none of its checkpoints can
// be needed. Pure functions of what the scheduler and the stoppers said, as
// decide() is (tune/execution/decide.h), so every rule is testable without processes.
//
// The continue lease (protocol::DecisionMsg::continue_through) reaches as
// far as the scheduler and every stopper are sure to let the trial go on:
// within it no rank waits for a decision and the controller sends none,
// unless one says stop or pause. The checkpoint lease
// (DecisionMsg::checkpoint_through) is the scheduler's alone: through it no
// pause nor clone can need a checkpoint (train::should_checkpoint).
#pragma once

#include <cstdint>
#include <limits>

namespace tune {

// What the leases of a trial that reported `iteration` and goes on depend on.
struct LeaseTerms {
  int64_t iteration = 0;
  bool synchronous = false;       // the scheduler decides every report (needs_synchronous_reports)
  bool scheduler_pauses = true;   // it may pause or clone trials (pauses_trials)
  bool winding_down = false;      // an interrupt or a stop_all: any report may end the trial
  int64_t scheduler_through = 0;  // the scheduler's continues_through
  // The least of the stoppers' continues_through; none: unbounded.
  int64_t stoppers_through = std::numeric_limits<int64_t>::max();
};

// The continue lease: `iteration` itself (every report decided) for a
// synchronous scheduler or an experiment winding down, else the least of
// the scheduler's and the stoppers' promises.
int64_t continue_lease(const LeaseTerms& terms);

// The checkpoint lease: unbounded for a scheduler that never pauses,
// `iteration` for a synchronous one, else the scheduler's promise.
int64_t checkpoint_lease(const LeaseTerms& terms);

// Whether the ranks wait for the decision on `iteration`: past their
// continue lease, or when its report carried a checkpoint.
bool awaits_decision(int64_t iteration, int64_t continue_through, bool with_checkpoint);

}  // namespace tune
