// Launcher: how a trial's worker group becomes processes. The seam between
// the controller and whatever runs ranks: child processes on this machine
// (LocalLauncher, tune/launch/local/launcher.h) or the tasks of one Slurm job step
// per group inside tunerun's own allocation (SlurmLauncher,
// tune/launch/slurm/launcher.h), or ssh sessions on a hostfile's hosts
// (SshLauncher, tune/launch/ssh/launcher.h); Kubernetes would be one more. The
// controller wraps the one it is given in a KeyedLauncher
// (tune/channel/rank_keys.h), which gives every launched rank a CURVE keypair of its
// own.
//
// A launcher starts N ranks with their environment and resources, tells
// when ranks exit, and signals or kills them. Optional methods let it size
// the resource pool (the CPUs and GPUs it runs ranks on, when the spec sets
// none), say whether a group fits now (a trial waits while it does not),
// refuse to keep idle groups for the next trial, check that every node sees
// the experiment directory, and describe its nodes for `tunerun status`.
// Which trial runs next stays the controller's choice. The protocol (HELLO,
// START, REPORT...) runs over the control channel, the same for every
// launcher.
//
// Everything is called from the controller's event loop; no locks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "tune/launch/lockstep.h"
#include "tune/launch/process.h"
#include "tune/resources.h"

namespace tune {

struct RankLaunch {
  std::vector<std::string> env;    // this rank's own variables ("NAME=value"), added last
  std::filesystem::path log_file;  // stdout and stderr, appended
};

struct GroupLaunch {
  std::string trial_id;
  int attempt = 0;                    // or a spare group's serial (what its HELLO says)
  std::vector<std::string> argv;      // argv[0] is the executable
  std::vector<std::string> env;       // the whole environment every rank shares
  std::filesystem::path working_dir;  // empty: the controller's
  Resources resources;                // what each rank gets
  std::vector<RankLaunch> ranks;      // rank r is ranks[r]
};

struct RankExit {
  int rank = 0;
  ExitStatus status;
};

// The live processes of one group.
class LaunchedGroup {
 public:
  virtual ~LaunchedGroup() = default;

  virtual int size() const = 0;
  // The pid rank `rank` will name in its HELLO (it proves the peer is that
  // process); 0 when the launcher cannot know it.
  virtual int64_t pid(int rank) const = 0;
  // File descriptors that become readable when a rank may have exited.
  virtual std::vector<int> exit_fds() const = 0;
  // Collects the exits that happened since the last call.
  virtual std::vector<RankExit> reap() = 0;
  virtual const std::optional<ExitStatus>& exit_status(int rank) const = 0;
  bool all_exited() const {
    for (int r = 0; r < size(); ++r) {
      if (!exit_status(r)) return false;
    }
    return true;
  }
  // Sends `signal` to every rank and whatever they started; ranks gone are
  // not an error.
  virtual void signal(int signal) = 0;
  // Kills every rank and waits until all are gone.
  virtual void kill_and_wait() = 0;
  // Why the ranks ended with a node of theirs, once they exited: "node n2
  // failed (srun: error: Node failure on n2)"; empty when they ended on
  // their own. A node's failure is not the trial's: it is not counted
  // against max_failures.
  virtual std::string node_failure() const { return {}; }
  // Whether, once the ranks exited, node_failure() is final: false while a
  // node of theirs is being checked (a probe step runs there).
  virtual bool nodes_decided() const { return true; }
  // Why the cluster holds ranks that have not started ("Slurm holds the
  // step pending: ..."); empty when they started, or the launcher cannot
  // tell. Held ranks did not hang: their group is placed again, uncounted.
  virtual std::string held_reason() { return {}; }
  // Every rank said HELLO: where they run, ranks start (a node whose steps
  // keep ending before that is not healthy, whatever else it passes).
  virtual void started() {}
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  // Starts every rank of `launch`. Throws tune::Error naming what could not
  // start; no rank of the group is left running then.
  virtual std::unique_ptr<LaunchedGroup> launch(const GroupLaunch& launch) = 0;
  // The CPUs of the machines this launcher runs ranks on; nullopt: this
  // machine's (the resource pool's own count).
  virtual std::optional<double> total_cpus() const { return std::nullopt; }
  // The GPUs of those machines, likewise; nullopt: this machine's (tune/system/gpus.h).
  virtual std::optional<int> total_gpus() const { return std::nullopt; }
  // Whether a group of `per_rank.num_workers` ranks fits where this launcher
  // places ranks now (free CPUs and GPUs per node); the pool's totals are
  // checked apart. A trial waits while its group does not fit.
  virtual bool can_place(const Resources& per_rank) const { return true; }
  // For an elastic group (Resources::min_workers): the most ranks, from
  // min_workers to num_workers, that fit where this launcher places ranks
  // now; 0 when not even min_workers do.
  virtual int max_ranks(const Resources& per_rank) const {
    return can_place(per_rank.smallest()) ? per_rank.num_workers : 0;
  }
  // Whether a finished group may stay alive, idle, for the next trial
  // (reuse_workers): true where idle ranks hold nothing another trial needs.
  virtual bool keeps_idle_groups() const { return true; }
  // What the launcher learnt that the run log should say (a node failed),
  // since the last call.
  virtual std::vector<std::string> take_notices() { return {}; }
  // Checks, before anything is written there, that every rank it may start
  // sees `experiment_dir` as the controller does (checkpoints are written by
  // ranks, read by the controller). Throws StorageError naming where not.
  virtual void check_storage(const std::filesystem::path& experiment_dir) {}
  // The nodes ranks run on now, for `tunerun status`: a JSON array of
  // {name, cpus, cpus_used, gpus, gpus_used, health, failures}. Null: this
  // machine alone (the resource pool says it all).
  virtual Json describe_nodes() const { return nullptr; }
  // Learns, once per turn of the event loop, what the launcher checks in
  // the background (probes of suspected nodes, the cluster's node states),
  // so that describe_nodes() is current while no trial waits.
  virtual void poll() {}
  // File descriptors the event loop also waits on: one readable means
  // poll() has news for the groups (their exit_fds() become readable once it
  // ran). For news shared by many groups: one fd polled once, not once per group.
  virtual std::vector<int> wake_fds() const { return {}; }
  // Why ranks cannot go on where this launcher runs them (a Slurm
  // allocation that ends or ended; no node that is up can hold a waiting
  // group for long); empty while they can. Asked once per turn of the event
  // loop: the controller then pauses every trial at its next checkpoint and
  // exits resumable, as on SIGTERM.
  virtual std::string stop_reason() { return {}; }
  // On resume: the nodes an earlier run recorded (describe_nodes()); their
  // failure counts carry over.
  virtual void restore_nodes(const Json& nodes) {}
  // Where ranks live in virtual time: what drives the controller's clock
  // (tune/launch/lockstep.h). Null: real time.
  virtual Lockstep* lockstep() { return nullptr; }
};

}  // namespace tune
