// SimLauncher: launcher "sim" (tune/launch/launcher.h). Its ranks are not
// processes but simulated peers (tune/launch/sim/peer.h), all in one helper
// process (tunerun-sim, tune/launch/sim/peer_host.h) that it starts at the first
// launch and talks to over a socketpair (tune/launch/sim/wire.h). Each peer
// speaks the real protocol over the real CURVE channel to the real
// controller, with the keypair the KeyedLauncher wrote for it; nothing in
// the controller knows they are simulated.
//
// The nodes are [simulation]'s (SimulationSpec): nodes x cpus_per_node,
// gpus_per_node, named sim-n1, sim-n2...; they size the resource pool, and
// a group is placed on them as its placement_strategy says
// (tune/launch/nodes.h's place_ranks). A rank's pid is a simulated one
// (above any real pid), which its HELLO names. Faults come from the peers'
// process: a rank that dies exits killed by SIGKILL; a node lost takes its
// ranks with it, and their group's node_failure() says so (no trial is
// charged); lose_node() loses one on demand.
//
// With [simulation] time = "virtual" it is the controller's Lockstep too
// (tune/launch/lockstep.h): the peers' process runs only when told to advance,
// and everything it says comes in the answer, in its order.
//
// Called from the controller's event loop, as every Launcher.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tune/launch/launcher.h"
#include "tune/spec/experiment.h"

namespace tune {

namespace sim {
class PeerProcess;
}  // namespace sim

class SimLauncher final : public Launcher, public Lockstep {
 public:
  // `peers_executable`: tunerun-sim (find_sim_peers_executable).
  SimLauncher(const SimulationSpec& simulation, std::filesystem::path peers_executable);
  ~SimLauncher() override;

  // Throws Error when the group does not fit on the nodes now, or the
  // peers' process cannot start or has ended.
  std::unique_ptr<LaunchedGroup> launch(const GroupLaunch& launch) override;
  std::optional<double> total_cpus() const override;
  std::optional<int> total_gpus() const override;
  // Throws ConfigError when the group could not be placed on the nodes
  // even were they all free.
  bool can_place(const Resources& per_rank) const override;
  int max_ranks(const Resources& per_rank) const override;
  std::vector<std::string> take_notices() override;
  // The peers' process writes what goes wrong to sim_peers.log there.
  void check_storage(const std::filesystem::path& experiment_dir) override;
  Json describe_nodes() const override;
  void poll() override;
  // The peers' channel, once they started.
  std::vector<int> wake_fds() const override;
  // Itself when [simulation] time is "virtual".
  Lockstep* lockstep() override;
  bool advance(std::optional<Clock::time_point> deadline, const std::vector<std::string>& sent,
               const std::function<void(const std::string&)>& take) override;

  // Loses node `node` (0-based) now: its ranks die, their groups'
  // node_failure() names it; it is back after node_recovery_s (never with 0).
  void lose_node(int node);

 private:
  std::shared_ptr<sim::PeerProcess> peers_;
};

// The tunerun-sim executable in one of `program_dirs` (the Python module
// names its own), else beside the worker executable `worker_argv0` or this
// one, or in the installed plug-in folder of either (find_program). Throws
// ConfigError at cluster.launcher when there is none.
std::filesystem::path find_sim_peers_executable(const std::string& worker_argv0,
                                                const std::vector<std::string>& program_dirs = {});

// A SimLauncher for `simulation`, its peers' executable found as above.
std::shared_ptr<Launcher> make_sim_launcher(const SimulationSpec& simulation,
                                            const std::string& worker_argv0,
                                            const std::vector<std::string>& program_dirs);

}  // namespace tune
