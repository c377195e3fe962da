#include "tune/launch/sim/launcher.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>

#include "core/errors.h"
#include "train/worker_env.h"
#include "tune/launch/process.h"
#include "tune/launch/sim/peer_process.h"
#include "tune/system/executable.h"

namespace tune {
namespace {

// A rank's whole CPUs on its node.
int whole_cpus(const Resources& per_rank) {
  return std::max(1, static_cast<int>(std::ceil(per_rank.cpus_per_worker)));
}

// The variables a simulated rank reads (train/worker_env.h); the rest of a
// worker's environment means nothing to it.
Json rank_variables(const std::vector<std::string>& env) {
  Json out = Json::array();
  for (const auto& var : env) {
    if (var.starts_with("TUNERUN_") || var.starts_with("RANK=") || var.starts_with("WORLD_SIZE=")) {
      out.push_back(var);
    }
  }
  return out;
}

// The ranks of one launch, among the simulated peers. Each holds its CPUs
// and GPUs on its node while it runs a trial; a spare until its START and a
// kept rank from its DONE to its next START hold none (the resource pool
// counts them, as for the local launcher: a rank reused on a node taken
// meanwhile holds more than the node has until one ends). Exits wake the
// controller through an eventfd of the group's own, written when the
// peers' channel (the launcher's wake_fds(), polled once for every group)
// brings them: a pump of the channel, by the launcher's poll() or a reap
// of any group, dispatches its messages to every group.
class SimGroup final : public LaunchedGroup, public sim::ExitSink {
 public:
  SimGroup(std::shared_ptr<sim::PeerProcess> peers, int cpus, int gpus, std::vector<int> nodes,
           bool spare)
      : peers_(std::move(peers)),
        id_(peers_->next_group()),
        cpus_(cpus),
        gpus_(gpus),
        nodes_(std::move(nodes)),
        status_(nodes_.size()),
        ended_(nodes_.size(), false),
        holds_(nodes_.size(), false),
        wake_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    for (size_t r = 0; r < nodes_.size(); ++r) {
      pids_.push_back(peers_->next_pid());
      if (!spare) hold(r);
    }
    peers_->add_group(id_, this);
  }
  ~SimGroup() override {
    signal(SIGKILL);
    for (size_t r = 0; r < nodes_.size(); ++r) release(r);
    peers_->remove_group(id_);
    close(wake_);
  }

  int64_t id() const { return id_; }
  int node(int rank) const { return nodes_.at(rank); }

  int size() const override { return static_cast<int>(nodes_.size()); }
  int64_t pid(int rank) const override { return pids_.at(rank); }
  std::vector<int> exit_fds() const override {
    if (all_exited()) return {};
    return {wake_};
  }
  std::vector<RankExit> reap() override {
    peers_->pump();
    uint64_t ignored = 0;
    [[maybe_unused]] auto n = read(wake_, &ignored, sizeof ignored);
    for (const RankExit& exit : exits_) status_[exit.rank] = exit.status;
    return std::exchange(exits_, {});
  }
  const std::optional<ExitStatus>& exit_status(int rank) const override { return status_.at(rank); }
  void signal(int signal) override {
    if (signal == 0 || all_ended() || peers_->ended()) return;
    try {
      peers_->send({{"op", "signal"}, {"group", id_}, {"signal", signal}});
    } catch (const Error&) {  // the peers are gone, and these ranks with them
    }
  }
  // As a process's, the exits it waited for are reaped: no reap() reports them.
  void kill_and_wait() override {
    signal(SIGKILL);
    // In virtual time a simulated rank dies of it at once: its exit is known.
    if (peers_->simulation().virtual_time()) {
      on_exit(-1, {.signal = SIGKILL, .signaled = true}, "");
      reap();
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!all_ended() && std::chrono::steady_clock::now() < deadline) peers_->pump(10);
    if (!all_ended()) on_exit(-1, {.signal = SIGKILL, .signaled = true}, "");
    reap();
  }
  std::string node_failure() const override { return node_failure_; }

  // Rank `rank` ended (-1: every rank still running).
  void on_exit(int rank, const ExitStatus& status, const std::string& node_lost) override {
    for (int r = rank < 0 ? 0 : rank; r < (rank < 0 ? size() : rank + 1); ++r) {
      if (r >= size() || ended_[r]) continue;
      ended_[r] = true;
      exits_.push_back({r, status});
      release(r);
    }
    if (!node_lost.empty() && node_failure_.empty()) node_failure_ = node_lost;
    const uint64_t one = 1;
    [[maybe_unused]] auto n = write(wake_, &one, sizeof one);
  }
  void on_busy(int rank, bool busy) override {
    if (rank < 0 || rank >= size() || ended_[rank]) return;
    if (busy) {
      hold(rank);
    } else {
      release(rank);
    }
  }

 private:
  // Whether every rank's exit is known (reaped or not).
  bool all_ended() const {
    return std::all_of(ended_.begin(), ended_.end(), [](bool ended) { return ended; });
  }
  void hold(size_t r) {
    if (holds_[r]) return;
    holds_[r] = true;
    SlurmNode& node = peers_->nodes()[nodes_[r]];
    node.used += cpus_;
    node.gpus_used += gpus_;
  }
  void release(size_t r) {
    if (!holds_[r]) return;
    holds_[r] = false;
    SlurmNode& node = peers_->nodes()[nodes_[r]];
    node.used -= cpus_;
    node.gpus_used -= gpus_;
  }

  std::shared_ptr<sim::PeerProcess> peers_;
  int64_t id_;
  int cpus_;
  int gpus_;
  std::vector<int> nodes_;  // each rank's
  std::vector<int64_t> pids_;
  std::vector<std::optional<ExitStatus>> status_;  // set when reaped
  std::vector<bool> ended_;                        // its exit is known, reaped or not
  std::vector<bool> holds_;      // the rank's CPUs and GPUs are still taken on its node
  std::vector<RankExit> exits_;  // not reaped yet
  std::string node_failure_;
  int wake_;  // eventfd: readable while exits wait
};

}  // namespace

SimLauncher::SimLauncher(const SimulationSpec& simulation, std::filesystem::path peers_executable)
    : peers_(std::make_shared<sim::PeerProcess>(simulation, std::move(peers_executable))) {}

SimLauncher::~SimLauncher() = default;

std::unique_ptr<LaunchedGroup> SimLauncher::launch(const GroupLaunch& launch) {
  const Resources& per_rank = launch.resources;
  const int n = static_cast<int>(launch.ranks.size());
  const int cpus = whole_cpus(per_rank);
  peers_->pump();  // ranks idle since their DONE hold no CPUs
  const bool spare = launch.trial_id == train::kSpareTrialId;
  std::vector<SlurmNode> free = peers_->nodes();
  // A spare holds nothing until its START: it goes where the group would
  // fit on idle nodes (the resource pool bounds what runs).
  for (auto& node : free) {
    if (spare) node.used = node.gpus_used = 0;
  }
  const std::vector<int> nodes =
      place_ranks(free, n, cpus, per_rank.gpus_per_worker, per_rank.placement_strategy);
  if (nodes.empty()) {
    throw Error(
        fmt::format("no room for {} ranks of {} CPUs and {} GPUs on the simulated nodes "
                    "now ({})",
                    n, cpus, per_rank.gpus_per_worker, to_string(per_rank.placement_strategy)));
  }
  peers_->start();
  auto group = std::make_unique<SimGroup>(peers_, cpus, per_rank.gpus_per_worker, nodes, spare);
  Json ranks = Json::array();
  for (int r = 0; r < n; ++r) {
    const RankLaunch& rank = launch.ranks[r];
    ranks.push_back({{"rank", r},
                     {"pid", group->pid(r)},
                     {"node", group->node(r)},
                     {"env", rank_variables(rank.env)},
                     {"log", rank.log_file.string()}});
  }
  peers_->send({{"op", "launch"},
                {"group", group->id()},
                {"env", rank_variables(launch.env)},
                {"ranks", std::move(ranks)}});
  return group;
}

std::optional<double> SimLauncher::total_cpus() const {
  const SimulationSpec& s = peers_->simulation();
  return static_cast<double>(s.nodes) * s.cpus_per_node;
}

std::optional<int> SimLauncher::total_gpus() const {
  const SimulationSpec& s = peers_->simulation();
  return s.nodes * s.gpus_per_node;
}

bool SimLauncher::can_place(const Resources& per_rank) const {
  peers_->pump();  // ranks idle since their DONE hold no CPUs
  const auto& nodes = peers_->nodes();
  const int cpus = whole_cpus(per_rank);
  const int gpus = per_rank.gpus_per_worker;
  if (!could_ever_place(nodes, per_rank.num_workers, cpus, gpus, per_rank.placement_strategy)) {
    const SimulationSpec& s = peers_->simulation();
    throw ConfigError::at_key(
        "simulation.nodes",
        fmt::format("a group of {} ranks x {} CPUs x {} GPUs never fits on {} simulated nodes of "
                    "{} CPUs and {} GPUs as {}: raise nodes, cpus_per_node or gpus_per_node in "
                    "[simulation], or lower num_workers, cpus_per_worker or gpus_per_worker",
                    per_rank.num_workers, cpus, gpus, s.nodes, s.cpus_per_node, s.gpus_per_node,
                    to_string(per_rank.placement_strategy)));
  }
  return !place_ranks(nodes, per_rank.num_workers, cpus, gpus, per_rank.placement_strategy).empty();
}

// The fewest ranks, then one more while they still fit.
int SimLauncher::max_ranks(const Resources& per_rank) const {
  if (!can_place(per_rank.smallest())) return 0;
  const int cpus = whole_cpus(per_rank);
  int fit = per_rank.fewest_workers();
  while (fit < per_rank.num_workers &&
         !place_ranks(peers_->nodes(), fit + 1, cpus, per_rank.gpus_per_worker,
                      per_rank.placement_strategy)
              .empty()) {
    ++fit;
  }
  return fit;
}

std::vector<std::string> SimLauncher::take_notices() { return peers_->take_notices(); }

void SimLauncher::check_storage(const std::filesystem::path& experiment_dir) {
  peers_->set_log_file(experiment_dir / "sim_peers.log");
}

Json SimLauncher::describe_nodes() const {
  Json out = Json::array();
  for (const SlurmNode& node : peers_->nodes()) {
    out.push_back({{"name", node.name},
                   {"cpus", node.cpus},
                   {"cpus_used", node.used},
                   {"gpus", node.gpus},
                   {"gpus_used", node.gpus_used},
                   {"health", node.usable() ? "usable" : "lost"},
                   {"failures", node.failures}});
  }
  return out;
}

void SimLauncher::poll() { peers_->pump(); }

std::vector<int> SimLauncher::wake_fds() const {
  if (peers_->fd() < 0 || peers_->ended()) return {};
  return {peers_->fd()};
}

Lockstep* SimLauncher::lockstep() { return peers_->simulation().virtual_time() ? this : nullptr; }

bool SimLauncher::advance(std::optional<Clock::time_point> deadline,
                          const std::vector<std::string>& sent,
                          const std::function<void(const std::string&)>& take) {
  peers_->start();
  return peers_->advance(deadline, sent, take);
}

void SimLauncher::lose_node(int node) { peers_->send({{"op", "lose"}, {"node", node}}); }

std::filesystem::path find_sim_peers_executable(const std::string& worker_argv0,
                                                const std::vector<std::string>& program_dirs) {
  std::vector<std::string> looked;
  std::string path = find_program("tunerun-sim", worker_argv0, program_dirs, looked);
  if (!path.empty()) return path;
  throw ConfigError::at_key(
      "cluster.launcher",
      fmt::format("launcher \"sim\" needs tunerun-sim, the simulated peers' program, which this "
                  "build lacks (looked in {}; scripts/build.sh builds it)",
                  fmt::join(looked, ", ")));
}

std::shared_ptr<Launcher> make_sim_launcher(const SimulationSpec& simulation,
                                            const std::string& worker_argv0,
                                            const std::vector<std::string>& program_dirs) {
  return std::make_shared<SimLauncher>(simulation,
                                       find_sim_peers_executable(worker_argv0, program_dirs));
}

}  // namespace tune
