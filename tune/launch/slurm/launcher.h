// SlurmLauncher: ranks as the tasks of one Slurm job step per trial group,
// inside the allocation tunerun itself runs in (salloc or sbatch: SLURM_JOB_ID
// is set). Slurm starts, isolates and accounts for the processes; which
// trial runs next stays the controller's choice, made against the
// allocation's free CPUs and GPUs per node as this launcher tracks them
// (never Slurm's queue).
//
// Placement packs a group onto as few nodes as fit: on one node when one
// has room for every rank, else over the nodes with room for the most ranks
// first. The ranks' hosts are exact (srun --distribution=arbitrary with a
// hosts file, rank r on its r-th line); each rank learns its rank from
// SLURM_PROCID and names its host and step in its HELLO (the placements
// table). srun runs under `setpriv --pdeathsig TERM`: when the controller
// dies, even by SIGKILL, srun gets SIGTERM and kills every task of the step.
//
// A rank's death is seen at once: srun's line for a task's end ("srun:
// error: n1: task 0: Killed") is that rank's exit (an inotify watch on
// srun's log wakes the event loop), not the heartbeat timeout's.
//
// The end of the allocation (stop_reason()): squeue no longer lists the job
// RUNNING, or its time limit is near; the controller pauses every trial.
//
// Node failures (tune/launch/nodes.h): the nodes of a step that ended
// abnormally (srun failed, or the controller had to kill it) are suspected
// and not placed on until a one-task probe step (`srun --overlap true`)
// runs there; a node the probe fails on, or that Slurm reports down or
// drained, has failed, and so has one where kUnstartedStepsFailed steps in a
// row never started; one that failed twice is not used again in this
// allocation.
// The allocation must survive a node's death: salloc/sbatch --no-kill.
// Nodes Slurm reports down or drained are not placed on; their states are
// read with sinfo when a step ends abnormally and every `poll_s` ([cluster]
// slurm_poll_s, 30 s unless set) while trials wait.
//
// GPUs: the allocation's GPUs per node are read from `scontrol show -d job`
// (its "Nodes=... GRES=gpu:2(IDX:0-1)" lines). Slurm 22.05 puts them in no
// variable salloc's command sees: SLURM_JOB_GPUS is set for batch scripts
// only, SLURM_GPUS_ON_NODE inside steps only. A rank asking for N GPUs gets
// them through `srun --gpus-per-task=N`, which binds them per task: Slurm
// sets each task's CUDA_VISIBLE_DEVICES to its own devices on its node, and
// makes a step wait rather than share a GPU with another step. Ranks asking
// for none get an empty CUDA_VISIBLE_DEVICES when the allocation has GPUs
// (Slurm unsets it there, which CUDA reads as every device).
// Which devices a rank gets is Slurm's choice; this launcher counts them per
// node, as CPUs, so that a trial waits instead of its step.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tune/launch/launcher.h"
#include "tune/launch/nodes.h"
#include "tune/system/clock.h"

namespace tune {
namespace detail {
struct SlurmState;
}  // namespace detail

// The allocation this process runs in: SLURM_JOB_ID, SLURM_JOB_NODELIST
// (expanded by `scontrol show hostnames`), SLURM_JOB_CPUS_PER_NODE and the
// GPUs per node (`scontrol show -d job`). Throws ConfigError naming the
// variable that is missing or malformed, Error when scontrol fails.
SlurmAllocation read_slurm_allocation();

class SlurmLauncher final : public Launcher {
 public:
  // `poll_s`: seconds between reads of Slurm's node states ([cluster]
  // slurm_poll_s); `node_wait_s`, `end_margin_s`: see stop_reason().
  SlurmLauncher(SlurmAllocation allocation, double poll_s, double node_wait_s = 60,
                double end_margin_s = 120);
  ~SlurmLauncher() override;  // kills probe steps still running

  std::unique_ptr<LaunchedGroup> launch(const GroupLaunch& launch) override;
  std::optional<double> total_cpus() const override;
  std::optional<int> total_gpus() const override;
  // Also learns the outcome of probe steps and Slurm's node states. Throws
  // ConfigError when the allocation's nodes could never hold the group (a
  // rank needs more CPUs or GPUs than any node has), Error when no node
  // left could (too many retired).
  bool can_place(const Resources& per_rank) const override;
  int max_ranks(const Resources& per_rank) const override;
  // Idle ranks would keep holding their nodes' CPUs in the allocation.
  bool keeps_idle_groups() const override { return false; }
  std::vector<std::string> take_notices() override;
  // A step on every node Slurm can run one on reads a file the controller
  // wrote in `experiment_dir` and writes one back; throws StorageError
  // naming the nodes and the path when a node where it ran does not see the
  // controller's files. Nodes down in Slurm, or where the step could not
  // run (dead before Slurm knows), are skipped, suspected, and named in a
  // notice with why; Error when no node could run it.
  void check_storage(const std::filesystem::path& experiment_dir) override;
  Json describe_nodes() const override;
  // Learns what probe steps and Slurm's node states say.
  void poll() override;
  // The allocation ended (squeue no longer lists it RUNNING: revoked,
  // cancelled, its time is up), or its time limit is `end_margin_s` away,
  // or for `node_wait_s` no node that is up and in the allocation could
  // hold a waiting group even were it free (every one of its nodes down,
  // suspected or retired). Names the nodes and the command that resumes
  // the experiment in a new allocation.
  std::string stop_reason() override;
  // Failure counts by node name; a node that failed before is probed
  // before use, one that failed twice is retired if this is the allocation
  // it failed in (else probed, and retired at its next failure).
  void restore_nodes(const Json& nodes) override;

  // The nodes, the CPUs and GPUs in use on each and their health, now.
  const SlurmAllocation& allocation() const;

 private:
  void note_if_stuck(int ranks, int cpus, int gpus, PlacementStrategy strategy) const;

  std::shared_ptr<detail::SlurmState> state_;
  Clock::duration node_wait_;
  Clock::duration end_margin_;  // shared with live groups, which free their share
};

}  // namespace tune
