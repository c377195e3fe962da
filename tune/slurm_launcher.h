// SlurmLauncher: ranks as the tasks of one Slurm job step per trial group,
// inside the allocation tunerun itself runs in (salloc or sbatch: SLURM_JOB_ID
// is set). Slurm starts, isolates and accounts for the processes; which
// trial runs next stays the controller's choice, made against the
// allocation's free CPUs per node as this launcher tracks them (never
// Slurm's queue).
//
// Placement packs a group onto as few nodes as fit: on one node when one
// has room for every rank, else over the nodes with the most free CPUs
// first. The ranks' hosts are exact (srun --distribution=arbitrary with a
// hosts file, rank r on its r-th line); each rank learns its rank from
// SLURM_PROCID and names its host and step in its HELLO (the placements
// table). srun runs under `setpriv --pdeathsig TERM`: when the controller
// dies, even by SIGKILL, srun gets SIGTERM and kills every task of the step.
//
// GPUs are not lent through Slurm yet: a trial asking for GPUs is refused.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tune/launcher.h"

namespace tune {

struct SlurmNode {
  std::string name;
  int cpus = 0;  // the allocation's CPUs on this node
  int used = 0;  // held by running groups
};

struct SlurmAllocation {
  std::string job_id;
  std::vector<SlurmNode> nodes;

  int total_cpus() const;
};

// SLURM_JOB_CPUS_PER_NODE ("2(x3),1": three nodes of 2 CPUs, one of 1) as one
// count per node. Throws ConfigError quoting `text` when it is malformed.
std::vector<int> parse_cpus_per_node(std::string_view text);

// The allocation this process runs in: SLURM_JOB_ID, SLURM_JOB_NODELIST
// (expanded by `scontrol show hostnames`) and SLURM_JOB_CPUS_PER_NODE.
// Throws ConfigError naming the variable that is missing or malformed.
SlurmAllocation read_slurm_allocation();

// The node (index into `nodes`) of each of `ranks` ranks needing `cpus`
// CPUs each, packed onto as few nodes as fit; empty when they do not fit
// in the free CPUs now.
std::vector<int> place_ranks(const std::vector<SlurmNode>& nodes, int ranks, int cpus);

class SlurmLauncher final : public Launcher {
 public:
  explicit SlurmLauncher(SlurmAllocation allocation);

  std::unique_ptr<LaunchedGroup> launch(const GroupLaunch& launch) override;
  std::optional<double> total_cpus() const override;
  bool can_place(const Resources& per_rank) const override;
  // Idle ranks would keep holding their nodes' CPUs in the allocation.
  bool keeps_idle_groups() const override { return false; }

  // The nodes and the CPUs in use on each, now.
  const SlurmAllocation& allocation() const;

 private:
  std::shared_ptr<SlurmAllocation> allocation_;  // shared with live groups, which free their CPUs
};

}  // namespace tune
