// What the SSH launcher (tune/launch/ssh/launcher.h) knows of its hosts and
// how it learns it: one OpenSSH control connection per host (a master, `ssh
// -M -N`, a child of the controller), whose end is the host's loss; a lost
// or unreachable host tried again every `retry`; a one-command probe (`ssh
// HOST true` over the connection) on a host a group ended badly on. Shared
// by the launcher and its live groups (which give CPUs and GPUs back, and
// report a session that ended badly).
//
// The hosts' health is the shared node model's (tune/launch/nodes.h): a
// lost connection is a node's failure; the connection coming back is the
// node reported up again, then usable (the connection is its probe). While
// a host cannot be reached, SlurmNode::slurm_down says so and nothing is
// placed there.
//
// Called from the controller's event loop only.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tune/launch/nodes.h"
#include "tune/launch/process.h"
#include "tune/spec/hostfile.h"
#include "tune/system/clock.h"

namespace tune::detail {

struct SshOptions {
  std::filesystem::path ssh_config;  // ssh -F; empty: ssh's own
  std::chrono::seconds retry{10};    // between tries to reach a lost host
  int retire_after = 2;              // SlurmNode::retire_after
  std::string rank_shim;             // tunerun-ssh-rank's path, the same on every host
};

struct SshHostState {
  std::string destination;             // what ssh is given
  std::optional<ChildProcess> master;  // its control connection, while one runs or connects
  bool connected = false;              // the master's socket is up
  bool said_unreachable = false;       // the run log said so since it last connected
  Clock::time_point next_try{};        // of a new master, once the last one ended
  std::optional<ChildProcess> probe;   // `ssh HOST true`, on a suspected host
  Clock::time_point probe_deadline{};
  std::vector<bool> gpus_taken;  // device index -> held by a running rank
};

struct SshState {
  SlurmAllocation allocation;  // the hosts as nodes; job_id: the hostfile's path
  std::vector<SshHostState> hosts;
  SshOptions options;
  std::filesystem::path control_dir;  // mode 0700: the control sockets and the masters' logs
  std::string ssh;                    // absolute paths (posix_spawn does not search)
  std::string setpriv;
  std::vector<std::string> notices;  // for the run log
  int timer_fd = -1;                 // readable when refresh() is due

  SshState(const std::vector<SshHost>& hosts, SshOptions options);
  ~SshState();  // ends masters and probes, removes control_dir
  SshState(const SshState&) = delete;
  SshState& operator=(const SshState&) = delete;

  void note(std::string line) {
    if (!line.empty()) notices.push_back(std::move(line));
  }

  // ssh to host `host` over its control connection, `args` after the
  // destination (`--` and a remote command line). Dies with the controller.
  std::vector<std::string> session_argv(int host, const std::vector<std::string>& args) const;
  // A remote command line that runs `argv` (each word quoted for the remote shell).
  static std::string remote_command(const std::vector<std::string>& argv);

  // Starts host `host`'s master.
  void connect(int host);
  // Waits until every host's master connected or failed, at most `limit`.
  void await_connections(Clock::duration limit);
  // Learns what ended masters and probes say, tries lost hosts again when
  // due, probes suspected hosts; re-arms timer_fd.
  void refresh();
  void suspect(const std::vector<int>& nodes);
  // SshLauncher::check_storage (tune/launch/ssh/launcher.h).
  void check_storage(const std::filesystem::path& experiment_dir);
  // Counts host `host`'s failure `why` and says so in the run log.
  void host_failed(int host, const std::string& why);

  std::filesystem::path socket(int host) const;
  std::filesystem::path master_log(int host) const;

  static constexpr auto kConnectTimeoutS = 5;  // ssh's ConnectTimeout
  static constexpr auto kAliveIntervalS = 2;   // ServerAliveInterval; x3: the loss seen
  static constexpr auto kProbeTimeout = std::chrono::seconds(20);
};

// This process's environment, for the ssh it runs (its agent, SSH_AUTH_SOCK,
// its HOME): not the ranks', which go down the session.
std::vector<std::string> ssh_environment();

// An executable on PATH, as an absolute path. Throws ConfigError keyed
// "cluster.launcher" naming the package that has it.
std::string find_ssh_program(const std::string& name, const std::string& package);

}  // namespace tune::detail
