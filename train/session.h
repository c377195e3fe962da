// What a train function calls while it runs inside a worker: its context and
// report(). Every rank of a trial calls report() the same number of times.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/config.h"
#include "core/types.h"
#include "train/checkpoint.h"

namespace train {

struct Context {
  int world_rank = 0;
  int world_size = 1;
  int local_rank = 0;  // among the trial's ranks on this host (a Slurm step may span hosts)
  int local_world_size = 1;
  int node_rank =
      0;  // this host among the trial's hosts, in order of their first rank (GROUP_RANK)
  int num_nodes = 1;  // hosts the trial's ranks run on
  std::string trial_id;
  std::string trial_name;  // equal to trial_id: names are deterministic already
  std::string trial_dir;   // <storage>/<experiment>/trials/<trial_id>
  std::string experiment;
  int attempt = 0;  // 0 for a trial's first run, +1 per restart
};

// The calling worker's context. Throws tune::Error outside a worker.
const Context& get_context();

// True inside a worker's train function (where report() and the checkpoint
// calls work), false elsewhere: lets a library work both in a trial and in
// a plain program or test.
bool in_worker();

// Cross-rank reductions report() can apply to named numeric metrics.
using Reduce = tune::ReduceOp;

struct ReportOptions {
  // Metrics reduced over all ranks' values; any other metric is rank 0's.
  // Every rank must pass the same map.
  std::map<std::string, Reduce> reduce;
};

// Reports one iteration's metrics (a JSON object of numbers, strings or
// booleans; metrics come from rank 0 unless reduced) and optionally a
// checkpoint (see train/checkpoint.h).
//
// A report with a checkpoint blocks until every rank has reported this
// iteration, the checkpoint is published, the result is on disk and the
// controller has decided. A report without one is pipelined: it is sent and
// report() returns at once, so the next iteration's work overlaps the
// controller's; the decision on it is awaited at the next report() (after
// the train function's last report nobody waits: the rank says DONE at once,
// and the controller records that report before it ends the trial). So:
//  - a stop or pause decided on iteration k takes effect at report k+1, on
//    every rank alike: iteration k+1 is computed but never recorded (Ray's
//    function API blocks instead; we trade one iteration of compute, at most,
//    for not waiting on every report, and a decision is never lost);
//  - when report() returns, every earlier report whose decision it awaited
//    is on disk, with all reports before it (and this one too if it carried
//    a checkpoint).
// Where the scheduler and the stoppers know ahead that they will let the
// trial continue (FIFO never decides; ASHA decides at its rungs, HyperBand
// at its milestones, PBT at its perturbation points; a stop at
// training_iteration N), the controller grants a lease up to the iteration
// before the next possible decision, the first one with the run's start,
// and no report within it waits at all:
// its decision is known to be "continue". A stop or pause that comes from
// outside the scheduler and the stoppers (an interrupt, the experiment's
// time budget, stop_all) reaches the ranks on its own, and takes effect at
// the first report() after it arrives, on every rank; the reports computed
// after the iteration it was decided on are not recorded. Within a lease
// only a checkpoint says that a report is on disk.
// A scheduler that needs every decision before the next iteration makes all
// reports block (TrialScheduler::needs_synchronous_reports).
//
// If the controller decides to stop or pause, report() throws an exception
// of tunerun's own (not a std::exception, so `catch (const std::exception&)`
// in user code does not swallow it) that the worker runtime catches: let it
// propagate. A pause the trial will come back from unchanged may instead
// block inside report() while the trial is PAUSED (its ranks kept alive):
// report() then returns when it resumes, and the function goes on in place;
// the paused time counts in neither time_this_iter_s nor time_total_s. If
// the trial is restarted from a checkpoint instead (its ranks were needed
// for a PBT exploit), the blocked report() throws as for a stop.
//
// training_iteration, time_this_iter_s, time_total_s, timestamp and
// trial_id are filled in automatically. training_iteration continues across
// restarts from a checkpoint: it counts from the checkpoint's iteration.
void report(const tune::Json& metrics, std::optional<Checkpoint> checkpoint = std::nullopt,
            const ReportOptions& options = {});

// True when the scheduler may pause the trial at the report this rank
// makes next (to resume it from that report's checkpoint) or let another
// trial clone it there (PBT). False where it cannot: before its next
// decision (HyperBand's milestone, PBT's perturbation point; see the lease
// under report()), and throughout under a scheduler that never pauses
// (FIFO, ASHA without promotion, the median stopping rule with hard_stop).
// A train function that checkpoints only so that the scheduler can pause,
// resume and clone it checkpoints exactly when this is true, and spares
// the others: call it right before report(). It waits for the decision on
// the previous report when that one is still unknown, as the next report()
// would, so it may throw as report() does. Checkpoints a trial needs to
// survive failures or an interrupt are the train function's own choice
// (say every N iterations), as before.
bool should_checkpoint();

namespace detail {
// Thrown by report() when the controller stops the trial.
struct StopTrial {};
}  // namespace detail

}  // namespace train
