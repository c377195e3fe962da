// SshLauncher: ranks on machines without a scheduler (cloud VMs, a lab's
// GPU boxes, the pods of a Kubernetes StatefulSet that run sshd), listed in
// a hostfile (tune/spec/hostfile.h) and reached with OpenSSH, as
// DeepSpeed's and Horovod's launchers reach theirs.
//
// One control connection per host (ControlMaster; the master is a child of
// the controller, tune/launch/ssh/state.h); every rank is one session over
// it (BatchMode: never a password prompt), running tunerun-ssh-rank
// (tune/launch/ssh/rank_shim.cpp) on the host, which reads the rank from
// the session's stdin: its CURVE keypair, environment, working folder and
// command. The keypair never appears on a command line nor in a file others
// can read: on the host it is a 0600 file in a 0700 folder of its own,
// removed when the rank ends. Signals for the rank go down the same stdin;
// its end (the controller gone, the session cut) kills the rank. What the
// rank writes comes back through ssh into the controller's rank log.
//
// Placement, node health, elastic groups and node failures are the shared
// node model's (tune/launch/nodes.h), as on Slurm: a lost connection is a
// lost node (the trials there restart from their checkpoints elsewhere,
// uncounted), a host that comes back is used again (elastic groups grow),
// one lost `retire_after` times is not. The controller's host must not be
// loopback for the ranks: make_launcher refuses 127.0.0.1.
//
// GPUs: each host's devices are lent by index (CUDA_VISIBLE_DEVICES per
// rank, the indices free on its host); ranks asking none get an empty one
// on a host that has GPUs. Storage: the experiment directory must be at the
// same path on every host (a shared filesystem), and so must the rank's
// executable and tunerun-ssh-rank (check_storage checks the first).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tune/launch/launcher.h"
#include "tune/spec/hostfile.h"

namespace tune {
namespace detail {
struct SshState;
struct SshOptions;
}  // namespace detail

struct SshLauncherOptions {
  std::filesystem::path ssh_config;  // ssh -F; empty: ssh's own (~/.ssh/config)
  double retry_s = 10;               // between tries to reach a lost host
  int retire_after = 2;              // the loss that retires a host; 0: none
  std::string rank_shim;             // tunerun-ssh-rank, at this path on every host
};

class SshLauncher final : public Launcher {
 public:
  // Connects to every host (at most ~ssh's ConnectTimeout); hosts that
  // cannot be reached are tried again every retry_s, placed on once they
  // are. Throws ConfigError keyed "cluster.launcher" when ssh or setpriv is
  // missing.
  SshLauncher(const std::vector<SshHost>& hosts, const SshLauncherOptions& options);
  ~SshLauncher() override;  // closes the connections

  std::unique_ptr<LaunchedGroup> launch(const GroupLaunch& launch) override;
  std::optional<double> total_cpus() const override;
  std::optional<int> total_gpus() const override;
  // Throws ConfigError when no host could ever hold the group, Error when
  // no host left could (the others retired).
  bool can_place(const Resources& per_rank) const override;
  int max_ranks(const Resources& per_rank) const override;
  // Idle ranks would keep holding their hosts' CPUs.
  bool keeps_idle_groups() const override { return false; }
  std::vector<std::string> take_notices() override;
  // Every reachable host reads a file the controller wrote in
  // `experiment_dir` and writes one back over ssh. StorageError naming the
  // hosts that do not share it; Error when no host can be reached.
  void check_storage(const std::filesystem::path& experiment_dir) override;
  // {name, cpus, cpus_used, gpus, gpus_used, health, failures, launcher}
  // per host; health "unreachable" while ssh cannot connect.
  Json describe_nodes() const override;
  void poll() override;
  // The hosts' masters, probes and a timer: one readable, poll() has news.
  std::vector<int> wake_fds() const override;
  // Failures by host name carry over a resume: a host that failed is
  // probed first, retired once it reaches retire_after.
  void restore_nodes(const Json& nodes) override;

  const SlurmAllocation& hosts() const;

 private:
  std::shared_ptr<detail::SshState> state_;  // shared with live groups, which free their share
};

// tunerun-ssh-rank in one of `program_dirs`, or beside `worker_argv0` or this
// executable. Throws ConfigError keyed "cluster.launcher" naming where it looked.
std::string find_ssh_rank_shim(const std::string& worker_argv0,
                               const std::vector<std::string>& program_dirs = {});

}  // namespace tune
