// PeerProcess: the controller's end of the simulated peers, shared by the
// SimLauncher (tune/launch/sim/launcher.h) and the groups it launched: the
// tunerun-sim child process (tune/launch/sim/peer_host.h), the channel to it
// (tune/launch/sim/wire.h), the simulated nodes with what running ranks hold
// on them, and the dispatch of what the peers say (a rank's exit to its
// group, a node lost or back to the nodes and the run log's notices).
//
// If the peers' process ends, every rank of every group is taken as killed
// (SIGKILL) and no group launches any more.
//
// Called from the controller's event loop only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "tune/launch/nodes.h"
#include "tune/launch/process.h"
#include "tune/spec/experiment.h"
#include "tune/system/clock.h"

namespace tune::sim {

// A launched group, as the dispatch reaches it.
class ExitSink {
 public:
  virtual ~ExitSink() = default;
  // Rank `rank` ended with `status`; `node_lost` says why when its node went.
  virtual void on_exit(int rank, const ExitStatus& status, const std::string& node_lost) = 0;
  // Rank `rank` runs a trial now, or waits idle (tune/launch/sim/wire.h: busy).
  virtual void on_busy(int rank, bool busy) = 0;
};

class PeerProcess {
 public:
  // `executable`: tunerun-sim. Starts nothing yet.
  PeerProcess(SimulationSpec simulation, std::filesystem::path executable);
  // Closes the channel (the peers' process ends with it) and reaps the process.
  ~PeerProcess();
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  const SimulationSpec& simulation() const { return simulation_; }
  // The simulated nodes (SlurmNode: the same placement and bookkeeping).
  std::vector<SlurmNode>& nodes() { return nodes_; }
  const std::vector<SlurmNode>& nodes() const { return nodes_; }

  // Where the peers' process writes what goes wrong (stderr); before start.
  void set_log_file(std::filesystem::path file) { log_file_ = std::move(file); }
  // Starts the process and says init, unless it runs. Throws Error naming
  // the executable when it cannot start, or when it ended.
  void start();
  bool ended() const { return ended_; }

  // Sends a message (tune/launch/sim/wire.h); waits while the channel is full.
  // Throws Error when the process is gone.
  void send(const Json& message);
  // Dispatches every message waiting; with `wait_ms` > 0 first waits that
  // long for one.
  void pump(int wait_ms = 0);
  // Virtual time: one step of the simulation (tune/launch/lockstep.h's advance),
  // the peers' exits and nodes dispatched in its order among `take`'s calls.
  bool advance(std::optional<Clock::time_point> deadline, const std::vector<std::string>& sent,
               const std::function<void(const std::string&)>& take);
  // The channel's descriptor, readable when the peers said something; -1
  // before start.
  int fd() const { return fd_; }

  // A simulated pid, unique in this controller run, and a group's id.
  int64_t next_pid() { return ++last_pid_; }
  int64_t next_group() { return ++last_group_; }
  void add_group(int64_t group, ExitSink* sink) { groups_[group] = sink; }
  void remove_group(int64_t group) { groups_.erase(group); }

  // Lines for the run log (a node lost or back) since the last call.
  std::vector<std::string> take_notices() { return std::exchange(notices_, {}); }

 private:
  void on_message(const Json& message);
  void lose_everything(const std::string& why);

  SimulationSpec simulation_;
  std::filesystem::path executable_;
  std::filesystem::path log_file_ = "/dev/null";
  std::vector<SlurmNode> nodes_;
  std::optional<ChildProcess> process_;
  int fd_ = -1;
  bool ended_ = false;
  // Simulated pids start above Linux's largest (4194304), so none is a
  // process of this machine.
  int64_t last_pid_ = 10'000'000;
  int64_t last_group_ = 0;
  Clock::time_point now_ = kVirtualStart;  // virtual time: the simulation's
  std::map<int64_t, ExitSink*> groups_;
  std::vector<std::string> notices_;
};

}  // namespace tune::sim
