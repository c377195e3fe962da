// SshLauncher (tune/launch/ssh/launcher.h): a trial group as one ssh session
// per rank, over each host's control connection (tune/launch/ssh/state.h).
#include "tune/launch/ssh/launcher.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <utility>

#include "core/errors.h"
#include "train/node_ranks.h"
#include "train/worker_env.h"
#include "tune/launch/ssh/state.h"
#include "tune/system/executable.h"

namespace tune {
namespace {

constexpr auto kSessionEndWait = std::chrono::seconds(10);  // for a rank to die once told to
constexpr int kSshFailed = 255;                             // ssh's own exit code: no connection

// Variables of the controller's host that the remote host has its own of.
bool host_specific(std::string_view var) {
  for (std::string_view name :
       {"HOME=", "USER=", "LOGNAME=", "SHELL=", "PWD=", "OLDPWD=", "HOSTNAME=", "TERM=", "DISPLAY=",
        "MAIL=", "TMPDIR=", "SHLVL=", "_=", "SSH_", "XDG_", "LS_COLORS=", "MOTD_SHOWN="}) {
    if (var.starts_with(name)) return true;
  }
  return false;
}

void set_env_var(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  std::erase_if(env, [&](const std::string& var) { return var.starts_with(name + "="); });
  env.push_back(name + "=" + value);
}

std::string variable(const std::vector<std::string>& env, const std::string& name) {
  std::string value;
  for (const auto& var : env) {
    if (var.starts_with(name + "=")) value = var.substr(name.size() + 1);
  }
  return value;
}

void record(std::string& out, std::string_view tag, std::string_view value) {
  out += fmt::format("{} {}\n", tag, value.size());
  out += value;
  out += '\n';
}

// One ssh session per rank. A rank's exit is its session's: 255 is ssh's
// own failure (the host or the connection), 128 + N the rank killed by N.
class SshGroup final : public LaunchedGroup {
 public:
  struct Rank {
    ChildProcess ssh;
    int input = -1;  // its stdin's write end: signals, and its end kills the rank
    std::vector<int> devices;
    std::optional<ExitStatus> status;
  };

  SshGroup(std::shared_ptr<detail::SshState> state, std::vector<int> nodes, int cpus, int gpus,
           std::vector<Rank> ranks)
      : state_(std::move(state)),
        nodes_(std::move(nodes)),
        cpus_(cpus),
        gpus_(gpus),
        ranks_(std::move(ranks)),
        failures_at_launch_(state_->allocation.failure_counts(nodes_)) {}
  ~SshGroup() override {
    if (!all_exited()) kill_and_wait();
    end();
  }

  int size() const override { return static_cast<int>(ranks_.size()); }
  int64_t pid(int) const override { return 0; }  // on another host
  std::vector<int> exit_fds() const override {
    std::vector<int> fds;
    for (const auto& rank : ranks_) {
      if (!rank.status) fds.push_back(rank.ssh.pidfd());
    }
    return fds;
  }
  std::vector<RankExit> reap() override {
    std::vector<RankExit> exits;
    for (int r = 0; r < size(); ++r) {
      Rank& rank = ranks_[r];
      if (rank.status || !rank.ssh.try_reap()) continue;
      ExitStatus status = *rank.ssh.exit_status();
      if (!status.signaled && status.code > 128 && status.code < 128 + 65) {
        status = {.signal = status.code - 128, .signaled = true};
      }
      rank.status = status;
      close_input(rank);
      exits.push_back({r, status});
    }
    if (all_exited()) end();
    return exits;
  }
  const std::optional<ExitStatus>& exit_status(int rank) const override {
    return ranks_[rank].status;
  }

  void signal(int signal) override {
    const std::string line = fmt::format("{}\n", signal);
    for (auto& rank : ranks_) {
      if (rank.status || rank.input < 0) continue;
      // A full pipe (a session that stopped reading) is a dead one: its end kills the rank.
      if (write(rank.input, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
        close_input(rank);
      }
    }
  }

  // Tells every rank to die; a session that outlives kSessionEndWait is cut
  // (the rank dies with its session's end).
  void kill_and_wait() override {
    killed_ = !all_exited();
    signal(SIGKILL);
    const auto deadline = Clock::now() + kSessionEndWait;
    while (!all_exited()) {
      reap();
      if (Clock::now() > deadline) {
        for (auto& rank : ranks_) {
          if (!rank.status) ::kill(rank.ssh.pid(), SIGKILL);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    end();
  }

  // The loss of a host of the group since its launch.
  std::string node_failure() const override {
    if (!ended_) return {};
    const SlurmNode* node = state_->allocation.failed_since(nodes_, failures_at_launch_);
    return node ? fmt::format("host {} was lost ({})", node->name, node->failure) : "";
  }

  // Undecided while a host of the group is suspected and reachable (its
  // probe, or its connection's end, decides).
  bool nodes_decided() const override {
    return std::none_of(nodes_.begin(), nodes_.end(), [&](int node) {
      const SlurmNode& n = state_->allocation.nodes[node];
      return n.health == NodeHealth::kSuspected && !n.slurm_down;
    });
  }

 private:
  static void close_input(Rank& rank) {
    if (rank.input >= 0) close(std::exchange(rank.input, -1));
  }

  // Gives the CPUs and GPUs back; the hosts of sessions ssh lost, or of a
  // group that had to be killed, are suspected.
  void end() {
    if (std::exchange(ended_, true)) return;
    std::vector<int> suspected;
    for (int r = 0; r < size(); ++r) {
      SlurmNode& node = state_->allocation.nodes[nodes_[r]];
      node.used -= cpus_;
      node.gpus_used -= gpus_;
      for (int device : ranks_[r].devices) state_->hosts[nodes_[r]].gpus_taken[device] = false;
      close_input(ranks_[r]);
      const auto& status = ranks_[r].status;
      if ((killed_ && status && status->signaled) ||
          (status && !status->signaled && status->code == kSshFailed)) {
        suspected.push_back(nodes_[r]);
      }
    }
    state_->suspect(suspected);
    state_->refresh();
  }

  std::shared_ptr<detail::SshState> state_;
  std::vector<int> nodes_;  // rank r's host
  int cpus_;                // per rank
  int gpus_;
  std::vector<Rank> ranks_;
  bool killed_ = false;
  bool ended_ = false;
  std::vector<int> failures_at_launch_;  // of rank r's host
};

std::string_view strategy_name(PlacementStrategy strategy) {
  switch (strategy) {
    case PlacementStrategy::kPack:
      return "PACK";
    case PlacementStrategy::kSpread:
      return "SPREAD";
    case PlacementStrategy::kStrictPack:
      return "STRICT_PACK: every rank on one host";
    case PlacementStrategy::kStrictSpread:
      return "STRICT_SPREAD: every rank on a host of its own";
  }
  return "?";
}

std::string health_of(const SlurmNode& node) {
  return node.slurm_down && node.health != NodeHealth::kRetired ? "unreachable"
                                                                : to_string(node.health);
}

int cpus_of(const Resources& r) {
  return std::max(1, static_cast<int>(std::ceil(r.cpus_per_worker)));
}

}  // namespace

SshLauncher::SshLauncher(const std::vector<SshHost>& hosts, const SshLauncherOptions& options)
    : state_(std::make_shared<detail::SshState>(
          hosts, detail::SshOptions{.ssh_config = options.ssh_config,
                                    .retry = std::chrono::seconds(
                                        std::max<int64_t>(1, std::llround(options.retry_s))),
                                    .retire_after = options.retire_after,
                                    .rank_shim = options.rank_shim})) {
  state_->await_connections(std::chrono::seconds(detail::SshState::kConnectTimeoutS + 2));
}

SshLauncher::~SshLauncher() = default;

const SlurmAllocation& SshLauncher::hosts() const { return state_->allocation; }

std::optional<double> SshLauncher::total_cpus() const { return state_->allocation.total_cpus(); }

std::optional<int> SshLauncher::total_gpus() const { return state_->allocation.total_gpus(); }

std::vector<std::string> SshLauncher::take_notices() { return std::exchange(state_->notices, {}); }

void SshLauncher::poll() { state_->refresh(); }

std::vector<int> SshLauncher::wake_fds() const {
  std::vector<int> fds{state_->timer_fd};
  for (const auto& host : state_->hosts) {
    if (host.master) fds.push_back(host.master->pidfd());
    if (host.probe) fds.push_back(host.probe->pidfd());
  }
  return fds;
}

bool SshLauncher::can_place(const Resources& per_rank) const {
  state_->refresh();
  const auto& nodes = state_->allocation.nodes;
  const int ranks = per_rank.num_workers, cpus = cpus_of(per_rank);
  const int gpus = per_rank.gpus_per_worker;
  const PlacementStrategy strategy = per_rank.placement_strategy;
  if (could_ever_place(nodes, ranks, cpus, gpus, strategy)) {
    return !place_ranks(nodes, ranks, cpus, gpus, strategy).empty();
  }
  std::vector<std::string> states;
  for (const auto& node : nodes) {
    states.push_back(
        fmt::format("{}: {} CPUs, {} GPUs, {}", node.name, node.cpus, node.gpus, health_of(node)));
  }
  std::vector<SlurmNode> all = nodes;
  for (auto& node : all) node.health = NodeHealth::kUsable;
  if (!could_ever_place(all, ranks, cpus, gpus, strategy)) {
    throw ConfigError::at_key(
        "cluster.hostfile",
        fmt::format("a group of {} ranks x {} CPUs x {} GPUs does not fit on the hostfile's hosts "
                    "as {} ({}): each rank's CPUs and GPUs must be on one host; list more or "
                    "bigger hosts, or lower num_workers, cpus_per_worker or gpus_per_worker",
                    ranks, cpus, gpus, strategy_name(strategy), fmt::join(states, "; ")));
  }
  throw Error(fmt::format(
      "no host left can hold a group of {} ranks x {} CPUs x {} GPUs ({}): {}; hosts lost "
      "ssh_retire_after times are not used again: resume the experiment once they are sound",
      ranks, cpus, gpus, strategy_name(strategy), fmt::join(states, "; ")));
}

int SshLauncher::max_ranks(const Resources& per_rank) const {
  if (!can_place(per_rank.smallest())) return 0;
  for (int ranks = per_rank.num_workers; ranks > per_rank.fewest_workers(); --ranks) {
    if (!place_ranks(state_->allocation.nodes, ranks, cpus_of(per_rank), per_rank.gpus_per_worker,
                     per_rank.placement_strategy)
             .empty()) {
      return ranks;
    }
  }
  return per_rank.fewest_workers();
}

Json SshLauncher::describe_nodes() const {
  Json nodes = Json::array();
  for (size_t i = 0; i < state_->allocation.nodes.size(); ++i) {
    const SlurmNode& node = state_->allocation.nodes[i];
    nodes.push_back({{"name", node.name},
                     {"destination", state_->hosts[i].destination},
                     {"cpus", node.cpus},
                     {"cpus_used", node.used},
                     {"gpus", node.gpus},
                     {"gpus_used", node.gpus_used},
                     {"health", health_of(node)},
                     {"failures", node.failures},
                     {"launcher", "ssh"}});
  }
  return nodes;
}

void SshLauncher::restore_nodes(const Json& nodes) {
  if (!nodes.is_array()) return;
  for (const Json& record : nodes) {
    if (!record.is_object() || !record.value("name", Json()).is_string()) continue;
    const int node = state_->allocation.find(record["name"].get<std::string>());
    const Json failures = record.value("failures", Json(0));
    if (node >= 0 && failures.is_number_integer()) {
      SlurmNode& n = state_->allocation.nodes[node];
      restore_node(n, failures.get<int>(), true);
      if (n.retire_after <= 0 || n.failures < n.retire_after) {
        if (n.health == NodeHealth::kRetired) n.health = NodeHealth::kSuspected;
      }
    }
  }
  state_->refresh();
}

void SshLauncher::check_storage(const std::filesystem::path& experiment_dir) {
  state_->check_storage(experiment_dir);
}

std::unique_ptr<LaunchedGroup> SshLauncher::launch(const GroupLaunch& launch) {
  const int n = static_cast<int>(launch.ranks.size());
  const int cpus = cpus_of(launch.resources);
  const int gpus = launch.resources.gpus_per_worker;
  state_->refresh();
  auto& nodes = state_->allocation.nodes;
  const std::vector<int> placed =
      place_ranks(nodes, n, cpus, gpus, launch.resources.placement_strategy);
  if (placed.empty()) {
    throw Error(fmt::format("no room for {} ranks of {} CPUs and {} GPUs on the hosts now ({})", n,
                            cpus, gpus, strategy_name(launch.resources.placement_strategy)));
  }
  std::vector<std::string> names;
  for (int node : placed) names.push_back(nodes[node].name);

  std::vector<std::string> shared;
  for (const auto& var : launch.env) {
    if (!host_specific(var)) shared.push_back(var);
  }
  const std::string key_pattern = variable(shared, train::kEnvCurveKeyFile);
  std::erase_if(shared, [](const std::string& var) {
    return var.starts_with(std::string(train::kEnvCurveKeyFile) + "=");
  });
  set_env_var(shared, "MASTER_ADDR", names.front());
  set_env_var(shared, train::kEnvRankHosts, fmt::format("{}", fmt::join(names, ",")));

  // Each host's own devices, by index.
  std::vector<std::vector<int>> devices(n);
  for (int r = 0; r < n; ++r) {
    auto& taken = state_->hosts[placed[r]].gpus_taken;
    for (int d = 0; d < static_cast<int>(taken.size()); ++d) {
      if (static_cast<int>(devices[r].size()) == gpus) break;
      if (!taken[d]) {
        taken[d] = true;
        devices[r].push_back(d);
      }
    }
  }
  std::vector<SshGroup::Rank> ranks;
  auto give_back = [&] {
    for (auto& rank : ranks) {
      if (rank.input >= 0) close(rank.input);
      if (!rank.ssh.exit_status()) ::kill(rank.ssh.pid(), SIGKILL);
      while (!rank.ssh.exit_status() && !rank.ssh.try_reap()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
    for (int r = 0; r < n; ++r) {
      for (int d : devices[r]) state_->hosts[placed[r]].gpus_taken[d] = false;
    }
  };
  try {
    for (int r = 0; r < n; ++r) {
      const int node = placed[r];
      std::vector<std::string> env = shared;
      for (const auto& var : launch.ranks[r].env) {
        set_env_var(env, var.substr(0, var.find('=')), var.substr(var.find('=') + 1));
      }
      set_env_var(env, train::kEnvNodeName, nodes[node].name);
      // None visible to a rank asking none, on a host that has some.
      if (nodes[node].gpus > 0) {
        set_env_var(env, "CUDA_VISIBLE_DEVICES", fmt::format("{}", fmt::join(devices[r], ",")));
      }
      // The rank's keypair, read here and sent down the session alone.
      std::string key_file = key_pattern;
      if (const size_t at = key_file.find("%t"); at != std::string::npos) {
        key_file.replace(at, 2, std::to_string(r));
      }
      std::ifstream key_in(key_file);
      std::stringstream key;
      key << key_in.rdbuf();
      if (key_pattern.empty() || !key_in) {
        throw Error(fmt::format("rank {}'s key file '{}' cannot be read", r, key_file));
      }
      std::string header = "tunerun-ssh-rank 1\n";
      record(header, "key", key.str());
      if (!launch.working_dir.empty()) {
        record(header, "cwd", std::filesystem::absolute(launch.working_dir).string());
      }
      for (const auto& var : env) record(header, "env", var);
      for (const auto& arg : launch.argv) record(header, "arg", arg);
      header += "start\n";

      int pipe_fds[2];
      if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw Error("cannot make a pipe for an ssh session");
      fcntl(pipe_fds[1], F_SETPIPE_SZ, 1 << 20);  // the header never waits for ssh
      SpawnOptions spawn{
          .argv = state_->session_argv(node, {"--", "exec " + detail::SshState::remote_command(
                                                                  {state_->options.rank_shim})}),
          .env = detail::ssh_environment(),
          .log_file = launch.ranks[r].log_file,
          .stdin_fd = pipe_fds[0]};
      std::optional<ChildProcess> ssh;
      try {
        ssh.emplace(ChildProcess::spawn(spawn));
      } catch (...) {
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        throw;
      }
      close(pipe_fds[0]);
      fcntl(pipe_fds[1], F_SETFL, O_NONBLOCK);
      ranks.push_back({std::move(*ssh), pipe_fds[1], devices[r], std::nullopt});
      const int input = pipe_fds[1];
      if (write(input, header.data(), header.size()) != static_cast<ssize_t>(header.size())) {
        throw Error(fmt::format("cannot hand rank {} to ssh for host {}", r, nodes[node].name));
      }
    }
  } catch (...) {
    give_back();
    throw;
  }
  for (int node : placed) {
    nodes[node].used += cpus;
    nodes[node].gpus_used += gpus;
  }
  return std::make_unique<SshGroup>(state_, placed, cpus, gpus, std::move(ranks));
}

std::string find_ssh_rank_shim(const std::string& worker_argv0,
                               const std::vector<std::string>& program_dirs) {
  std::vector<std::string> looked;
  std::string path = find_program("tunerun-ssh-rank", worker_argv0, program_dirs, looked);
  if (!path.empty()) return path;
  throw ConfigError::at_key(
      "cluster.launcher",
      fmt::format("launcher \"ssh\" needs tunerun-ssh-rank, the ranks' end of each session, which "
                  "this build lacks (looked in {}; scripts/build.sh builds it)",
                  fmt::join(looked, ", ")));
}

}  // namespace tune
