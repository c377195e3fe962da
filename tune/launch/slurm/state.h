// What the Slurm launcher (tune/launch/slurm/launcher.h) knows of its allocation
// and how it learns it: the allocation from SLURM_* and `scontrol`, the
// nodes' states from `sinfo`, the health of suspected nodes from probe
// steps, and the Slurm commands it runs. Shared by the launcher and its
// live groups (which give CPUs back and report a step that ended badly).
//
// Called from the controller's event loop only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tune/launch/nodes.h"
#include "tune/launch/process.h"
#include "tune/system/clock.h"

namespace tune::detail {

// `name`'s value; throws ConfigError when it is not set (not in an allocation).
std::string require_env(const char* name);
// An executable on PATH, as an absolute path (posix_spawn does not search).
std::string find_program(const std::string& name);
// The names in `nodelist` (`scontrol show hostnames`), which `source` gave.
std::vector<std::string> expand_hostnames(const std::string& nodelist, std::string_view source);
// Sets the GPUs of every node of `allocation` from `scontrol show -d job`:
// the allocation's own GPUs per node (salloc's environment has none of it).
void read_job_gpus(SlurmAllocation& allocation);
// This process's environment, for the srun steps it starts.
std::vector<std::string> environment();
// Waits for `child` at most `limit`; kills it past that. True when it exited 0.
bool wait_ok(ChildProcess& child, std::chrono::seconds limit);
// The last line of `file` that is not empty; empty when none.
std::string last_line(const std::filesystem::path& file);
// What `file` holds from byte `offset` on; empty when it cannot be read.
std::string read_from(const std::filesystem::path& file, std::uintmax_t offset);
// A task's end as srun reports it on its stderr while the step goes on
// ("srun: error: n1: task 0: Killed", "srun: error: n2: tasks 0-1,3: Exited
// with exit code 3"): srun hears of it from the node's slurmd at once.
struct TaskExit {
  int task = 0;
  ExitStatus status;
};
// Every task end `srun_output` reports, in its order; a task named twice
// is named once. Exits with code 0 are not reported by srun.
std::vector<TaskExit> read_task_exits(std::string_view srun_output);

// A running step of a job as squeue lists it.
struct ListedStep {
  std::string name;
  std::string nodelist;  // as Slurm writes it ("n[1,3]"): expand_hostnames names them
  bool operator==(const ListedStep&) const = default;
};
// The running steps of job `job_id` (`squeue -s`: a step Slurm holds
// pending is not among them); nullopt when squeue cannot say.
std::optional<std::vector<ListedStep>> running_steps(const std::string& job_id);
// squeue's lines "NAME|NODELIST" as steps.
std::vector<ListedStep> parse_listed_steps(std::string_view squeue_output);
// The names of the nodes job `job_id` holds now (`scontrol show job`);
// nullopt when scontrol cannot say.
std::optional<std::vector<std::string>> job_nodes(const std::string& job_id);

// Job `job_id` as squeue lists it now.
struct JobState {
  bool ended = false;                 // no longer listed, or in a state that is not RUNNING
  std::string state;                  // squeue's %T ("RUNNING", "CANCELLED"...)
  std::optional<double> time_left_s;  // until its time limit; nullopt: none
};
// nullopt when squeue cannot say (the controller does not answer).
std::optional<JobState> read_job_state(const std::string& job_id);
// squeue's %L ("1-02:03:04", "59:58", "UNLIMITED") in seconds; nullopt: no limit.
std::optional<double> parse_time_left(std::string_view text);
// Whether srun's lines say Slurm ended the step for the whole job ("***
// STEP 5.0 ON n1 CANCELLED AT ...", "DUE TO TIME LIMIT", "Job step
// aborted"): the allocation may be ending.
bool step_cancelled_by_slurm(std::string_view srun_output);

// The allocation and what the launcher learns of its nodes, shared with the
// live groups (which free their CPUs, and report a step that ended badly).
struct SlurmState {
  struct Probe {
    int node;
    ChildProcess srun;
    Clock::time_point deadline;
  };

  SlurmAllocation allocation;
  std::string srun = find_program("srun");
  std::vector<Probe> probes;
  std::vector<std::string> notices;  // for the run log
  Clock::time_point next_poll{};     // of Slurm's node states
  Clock::time_point last_poll{};
  Clock::duration poll_period{};  // [cluster] slurm_poll_s, set by SlurmLauncher
  // The allocation's end: why it ended (empty while it runs), and when its
  // time limit ends it (as squeue said at the last poll).
  std::string job_end;
  std::optional<Clock::time_point> ends_at;
  // Since when no node that is up and in the allocation could hold a
  // waiting group even were it free (SlurmLauncher::can_place), and why.
  std::optional<Clock::time_point> stuck_since;
  Clock::time_point stuck_seen{};
  std::string stuck_reason;
  std::filesystem::path experiment_dir;  // check_storage's, for the resume command
  // Slurm held a step for a step it cannot end: steps overlap from then on.
  bool overlap_steps = false;
  // The steps of this run whose srun ended: one Slurm still lists is
  // Slurm's bookkeeping, not a step running there.
  std::unordered_set<std::string> ended_steps;

  ~SlurmState();  // kills probe steps still running

  void note(std::string line) {
    if (!line.empty()) notices.push_back(std::move(line));
  }

  // `quiet`: without srun's informational lines (its errors stay).
  std::vector<std::string> srun_argv(std::vector<std::string> args, bool quiet = true) const {
    std::vector<std::string> argv{srun, "--jobid=" + allocation.job_id};
    if (quiet) argv.push_back("--quiet");
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  void suspect(const std::vector<int>& nodes) {
    for (int node : nodes) note(suspect_node(allocation.nodes[node]));
    next_poll = Clock::now();
  }

  // A step that ended well may still have lost a node: srun inside a
  // --no-kill allocation exits 0 when Slurm declares a node of its step
  // failed. Slurm's states are read again soon (at most once a second).
  void step_ended(const std::vector<int>& nodes) {
    for (int node : nodes) allocation.nodes[node].step_ended = true;
    next_poll = std::min(next_poll, last_poll + kRecheckPeriod);
  }

  // The node left the allocation, or failed `why`: a probe there failed.
  void probe_failed(SlurmNode& node, const std::string& why);

  // Reads every node's state from sinfo now.
  void poll_slurm();
  // Learns what finished probes say, reads Slurm's states when due, and
  // starts a probe on every suspected node that has none.
  void refresh();

  static constexpr auto kRecheckPeriod = std::chrono::seconds(1);
  static constexpr auto kProbeTimeout = std::chrono::seconds(20);
};

}  // namespace tune::detail
