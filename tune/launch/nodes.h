// The nodes of an allocation as a multi-node launcher sees them (Slurm's,
// tune/launch/slurm/launcher.h, and the simulated one, which models the same
// health): CPUs and GPUs per node, those its running groups hold, and each
// node's health. Apart from any launcher's processes, so that placement and
// health are testable alone.
//
// Health, as Ray's node manager marks nodes dead, but learnt from steps:
//
//   usable --a step on it ended abnormally--> suspected
//   suspected --probe step passes--> usable
//   suspected --probe fails, or Slurm reports it down--> failed once (down)
//   usable --a step there ended and Slurm then reports it down--> failed once
//   down --Slurm reports it up again--> suspected (probed before reuse)
//   usable --kUnstartedStepsFailed steps in a row there never started--> failed once
//   any --second failure--> retired: never placed on again in this allocation
//          (SlurmNode::retire_after: the second unless set otherwise)
//   any --Slurm took it out of the allocation--> retired (no second failure:
//          a --no-kill job loses the nodes Slurm declares down; one that
//          returns is no longer the job's, and its probe fails for that)
//
// One failure is counted once: srun naming a node failed, a probe failing
// there and Slurm reporting it down are one failure until the node is
// usable again. Failure counts carry over a resume (restore_node); a resume
// in a new allocation probes a node that failed before, and retires it at
// its next failure.
//
// Steps that never start count too: a probe step (one task, --overlap) can
// pass on a node where Slurm holds every trial's step pending, for CPUs a
// step it lost track of still holds there (a node that died and came back
// before Slurm noticed). Such a node would take the same trial again and
// again.
//
// Independently, a node Slurm reports DOWN, DRAIN or not responding is not
// placed on while it says so. Not thread-safe: the controller's loop owns it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tune/resources.h"

namespace tune {

enum class NodeHealth {
  kUsable,
  kSuspected,  // a step on it ended abnormally; a probe step decides
  kDown,       // failed once; waits for Slurm to report it up, then is probed
  kRetired,    // failed twice; not used again in this allocation
};

// "usable", "suspected", "failed once", "retired".
const char* to_string(NodeHealth health);

struct SlurmNode {
  std::string name;
  int cpus = 0;       // the allocation's CPUs on this node
  int used = 0;       // CPUs held by running groups
  int gpus = 0;       // the allocation's GPUs on this node
  int gpus_used = 0;  // held by running groups
  NodeHealth health = NodeHealth::kUsable;
  int failures = 0;
  std::string failure;      // why it last failed, or left the allocation
  bool slurm_down = false;  // Slurm's latest word: down, drained, failing or not responding
  bool step_ended = false;  // a step there ended since Slurm's state was last read
  int unstarted_steps = 0;  // steps in a row there that ended before their ranks all started
  // Failed, and no probe has passed there since: a probe that fails now is
  // the same outage, not a failure of its own.
  bool down_since_failure = false;
  // The failure that retires it; 0: none does (an SSH host the user
  // brings back as often as it drops, tune/launch/ssh/launcher.h).
  int retire_after = 2;

  bool usable() const { return health == NodeHealth::kUsable && !slurm_down; }
  int free_cpus() const { return usable() ? cpus - used : 0; }
  int free_gpus() const { return usable() ? gpus - gpus_used : 0; }
};

struct SlurmAllocation {
  std::string job_id;
  std::vector<SlurmNode> nodes;

  int total_cpus() const;
  int total_gpus() const;
  // The index of node `name`; -1 when the allocation has none.
  int find(std::string_view name) const;
  // The failure counts of `group` (node indices) now: a group's at its
  // launch, for failed_since.
  std::vector<int> failure_counts(const std::vector<int>& group) const;
  // The first node of `group` that failed since its counts were
  // `at_launch` (failure_counts then); null when none did.
  const SlurmNode* failed_since(const std::vector<int>& group,
                                const std::vector<int>& at_launch) const;
};

// SLURM_JOB_CPUS_PER_NODE ("2(x3),1": three nodes of 2 CPUs, one of 1) as one
// count per node. Throws ConfigError quoting `text` when it is malformed.
std::vector<int> parse_cpus_per_node(std::string_view text);

// The GPUs of each node of `scontrol show -d job`'s output, as
// {node list, GPUs} (the list in Slurm's compressed form, "n[1-2]"), one
// per "Nodes=" line; typed GPUs ("gpu:a100:2") count as GPUs, and a line
// without any counts 0. Throws ConfigError quoting a GRES it cannot read.
std::vector<std::pair<std::string, int>> parse_job_gpus(std::string_view scontrol_job);

// The node (index into `nodes`) of each of `ranks` ranks needing `cpus`
// CPUs and `gpus` GPUs each, on usable nodes as `strategy` says: PACK onto
// as few as fit (one if one holds them all: the fullest such; else the
// roomiest first), SPREAD each rank onto the node holding fewest of the
// group's ranks (the roomiest of those), STRICT_PACK onto one node,
// STRICT_SPREAD onto as many nodes as ranks. Empty when they do not fit in
// what is free now. A rank's CPUs and GPUs are on its node; ranks on one
// node are consecutive.
std::vector<int> place_ranks(const std::vector<SlurmNode>& nodes, int ranks, int cpus, int gpus = 0,
                             PlacementStrategy strategy = PlacementStrategy::kPack);

// Whether a group of `ranks` x (`cpus`, `gpus`) could ever be placed again
// so: on the nodes not retired, were they all free.
bool could_ever_place(const std::vector<SlurmNode>& nodes, int ranks, int cpus, int gpus = 0,
                      PlacementStrategy strategy = PlacementStrategy::kPack);

// Whether sinfo's compact state ("idle", "mix", "alloc", "down*", "drain",
// "drng", "fail"...) lets steps start on a node. A trailing '*' means the
// node does not respond.
bool slurm_state_usable(std::string_view state);
// Whether it says the node failed (down, failing, not responding), rather
// than being taken out of service (drained, in maintenance...).
bool slurm_state_failed(std::string_view state);

// The health transitions above. Each returns a line for the run log when the
// change deserves one, else an empty string.
std::string suspect_node(SlurmNode& node);
std::string probe_passed(SlurmNode& node);
std::string node_failed(SlurmNode& node, std::string_view why);
std::string apply_slurm_state(SlurmNode& node, std::string_view state);
// The node is no longer in allocation `job_id`.
std::string node_left(SlurmNode& node, std::string_view job_id);
// A step there ended before all its ranks started: Slurm held it pending,
// or it had to be cancelled. The kUnstartedStepsFailed-th such step in a row
// (no step between whose ranks all started there) is the node's failure,
// whatever its probes say; `why`: the last one's end.
inline constexpr int kUnstartedStepsFailed = 3;
std::string step_not_started(SlurmNode& node, std::string_view why);
// Every rank of a step there started: the node runs steps.
void step_started(SlurmNode& node);
// What an earlier run of the experiment recorded of the node (its
// failures): one that failed is probed before use; one that failed twice
// is retired if `same_allocation`, else it is probed too (a new allocation
// is a fresh start for its nodes) and retired at its next failure.
void restore_node(SlurmNode& node, int failures, bool same_allocation = true);

// What srun's own lines (its stderr, one step's) say of the step's nodes.
struct SrunReport {
  // Nodes it names as failed or unreachable, each with the line naming it
  // ("srun: error: Node failure on n2", "srun: error: Task launch for
  // StepId=7.3 failed on node n2: Communication connection failure", or by
  // its place among the step's nodes: "srun: error: Aborting, io error and
  // missing step on node 0", when the node came back before Slurm noticed,
  // "srun: error: Cannot communicate with node 0.  Aborting job.").
  std::vector<std::pair<std::string, std::string>> failed_nodes;
  // It waits for Slurm to create the step ("step creation temporarily
  // disabled, retrying"), which Slurm holds pending.
  bool step_pending = false;
  std::string pending_line;   // the line that says so
  bool step_created = false;  // "Step created for ..." came after a wait
};
// `step_nodes`: the step's nodes in Slurm's order (which srun numbers).
SrunReport read_srun_output(std::string_view text, const std::vector<std::string>& step_nodes = {});

// The NodeList of `scontrol show job -o`'s output (Slurm's compressed
// form); empty when it has none.
std::string parse_job_nodelist(std::string_view scontrol_job);

}  // namespace tune
