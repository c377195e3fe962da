#include "tune/slurm_launcher.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <utility>

#include "core/errors.h"
#include "train/node_ranks.h"
#include "train/worker_env.h"

extern char** environ;

namespace tune {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kCancelWait = std::chrono::seconds(10);  // for srun to kill its step and exit

std::string require_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    throw ConfigError(
        fmt::format("{} is not set: the slurm launcher runs inside an allocation "
                    "(salloc or sbatch)",
                    name));
  }
  return value;
}

// An executable on PATH, as an absolute path (posix_spawn does not search).
std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/bin:/bin";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::filesystem::path candidate = std::filesystem::path(dirs.substr(0, colon)) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    dirs = colon == std::string_view::npos ? "" : dirs.substr(colon + 1);
  }
  throw Error(fmt::format("{} is not on PATH: the slurm launcher needs Slurm's clients", name));
}

// What `command` (a shell command line) writes on stdout; nullopt when it
// cannot run or exits with an error.
std::optional<std::string> read_command(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  if (pclose(pipe) != 0) return std::nullopt;
  return out;
}

// Slurm's characters in node lists ("n[1-2],gpu07"): the lists go into shell commands.
void check_nodelist(const std::string& nodelist, std::string_view source) {
  if (nodelist.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                 "-_.,[]") != std::string::npos) {
    throw ConfigError(fmt::format("{}='{}' is not a Slurm node list", source, nodelist));
  }
}

// The names in `nodelist`, which `source` gave.
std::vector<std::string> expand_hostnames(const std::string& nodelist, std::string_view source) {
  check_nodelist(nodelist, source);
  const auto out = read_command(fmt::format("scontrol show hostnames '{}'", nodelist));
  std::vector<std::string> names;
  std::istringstream lines(out.value_or(""));
  for (std::string name; lines >> name;) names.push_back(name);
  if (names.empty()) throw Error(fmt::format("`scontrol show hostnames {}` failed", nodelist));
  return names;
}

// Sets the GPUs of every node of `allocation` from `scontrol show -d job`:
// the allocation's own GPUs per node (salloc's environment has none of it).
void read_job_gpus(SlurmAllocation& allocation) {
  const auto out =
      read_command(fmt::format("scontrol show -d job '{}' 2>/dev/null", allocation.job_id));
  if (!out) throw Error(fmt::format("`scontrol show -d job {}` failed", allocation.job_id));
  for (const auto& [nodelist, gpus] : parse_job_gpus(*out)) {
    for (const auto& name : expand_hostnames(nodelist, "scontrol show -d job: Nodes")) {
      const int node = allocation.find(name);
      if (node >= 0) allocation.nodes[node].gpus = gpus;
    }
  }
}

// Replaces NAME=... in `env` (getenv takes the first of duplicates).
void set_variable(std::vector<std::string>& env, const std::string& name,
                  const std::string& value) {
  std::erase_if(env, [&](const std::string& var) { return var.starts_with(name + "="); });
  env.push_back(name + "=" + value);
}
// One line per node from sinfo: "NAME STATE". Empty when sinfo fails (the
// states are then left as they were).
std::vector<std::pair<std::string, std::string>> read_node_states(
    const std::vector<SlurmNode>& nodes) {
  std::string names;
  for (const auto& node : nodes) names += (names.empty() ? "" : ",") + node.name;
  std::istringstream lines(
      read_command(fmt::format("sinfo -h -N -n '{}' -o '%N %t' 2>/dev/null", names)).value_or(""));
  std::vector<std::pair<std::string, std::string>> states;
  for (std::string name, state; lines >> name >> state;) states.emplace_back(name, state);
  return states;
}

std::vector<std::string> environment() {
  std::vector<std::string> env;
  for (char** var = environ; *var != nullptr; ++var) env.emplace_back(*var);
  return env;
}

// Waits for `child` at most `limit`; kills it past that. True when it exited 0.
bool wait_ok(ChildProcess& child, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (!child.try_reap()) {
    if (Clock::now() > deadline) {
      ::kill(child.pid(), SIGKILL);
      while (!child.try_reap()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return child.exit_status()->ok();
}

}  // namespace

namespace detail {

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

  void note(std::string line) {
    if (!line.empty()) notices.push_back(std::move(line));
  }

  std::vector<std::string> srun_argv(std::vector<std::string> args) const {
    std::vector<std::string> argv{srun, "--jobid=" + allocation.job_id, "--quiet"};
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

  void poll_slurm() {
    last_poll = Clock::now();
    next_poll = last_poll + kPollPeriod;
    for (const auto& [name, state] : read_node_states(allocation.nodes)) {
      const int node = allocation.find(name);
      if (node >= 0) note(apply_slurm_state(allocation.nodes[node], state));
    }
  }

  // Learns what finished probes say, reads Slurm's states when due, and
  // starts a probe on every suspected node that has none.
  void refresh() {
    const auto now = Clock::now();
    for (auto it = probes.begin(); it != probes.end();) {
      SlurmNode& node = allocation.nodes[it->node];
      if (it->srun.try_reap()) {
        note(it->srun.exit_status()->ok()
                 ? probe_passed(node)
                 : node_failed(node, "a probe step there " + it->srun.exit_status()->describe()));
      } else if (now > it->deadline) {
        ::kill(it->srun.pid(), SIGKILL);
        wait_ok(it->srun, kProbeTimeout);
        note(node_failed(
            node, fmt::format("a probe step there did not end in {} s", kProbeTimeout.count())));
      } else {
        ++it;
        continue;
      }
      it = probes.erase(it);
    }
    auto probing = [&](int node) {
      return std::any_of(probes.begin(), probes.end(),
                         [&](const Probe& p) { return p.node == node; });
    };
    bool unprobed = false;
    for (size_t i = 0; i < allocation.nodes.size(); ++i) {
      unprobed |= allocation.nodes[i].health == NodeHealth::kSuspected && !probing(i);
    }
    if (unprobed || now >= next_poll) poll_slurm();
    for (size_t i = 0; i < allocation.nodes.size(); ++i) {
      const SlurmNode& node = allocation.nodes[i];
      if (node.health != NodeHealth::kSuspected || node.slurm_down || probing(i)) continue;
      SpawnOptions spawn;
      spawn.argv = srun_argv({"--job-name=tunerun-probe", "--nodelist=" + node.name, "--nodes=1",
                              "--ntasks=1", "--overlap", "true"});
      spawn.env = environment();
      spawn.log_file = "/dev/null";
      probes.push_back({static_cast<int>(i), ChildProcess::spawn(spawn), now + kProbeTimeout});
    }
  }

  ~SlurmState() {
    for (auto& probe : probes) {
      ::kill(probe.srun.pid(), SIGKILL);
      wait_ok(probe.srun, kProbeTimeout);
    }
  }

  static constexpr auto kPollPeriod = std::chrono::seconds(30);
  static constexpr auto kRecheckPeriod = std::chrono::seconds(1);
  static constexpr auto kProbeTimeout = std::chrono::seconds(20);
};

}  // namespace detail

namespace {

// One srun: every rank of the group is one of its tasks.
class SlurmGroup final : public LaunchedGroup {
 public:
  SlurmGroup(std::shared_ptr<detail::SlurmState> state, std::vector<int> nodes, int cpus, int gpus,
             ChildProcess srun)
      : state_(std::move(state)),
        nodes_(std::move(nodes)),
        cpus_(cpus),
        gpus_(gpus),
        srun_(std::move(srun)) {}
  ~SlurmGroup() override {
    if (!srun_.exit_status()) kill_and_wait();
    end();
  }

  int size() const override { return static_cast<int>(nodes_.size()); }  // ranks
  int64_t pid(int) const override { return 0; }  // on another node: not comparable
  std::vector<int> exit_fds() const override {
    if (srun_.exit_status()) return {};
    return {srun_.pidfd()};
  }
  // srun ends when every task ended (or the step was cancelled): all ranks
  // exit at once, with srun's status (the worst of its tasks').
  std::vector<RankExit> reap() override {
    if (srun_.exit_status() || !srun_.try_reap()) return {};
    end();
    std::vector<RankExit> exits;
    for (int r = 0; r < size(); ++r) exits.push_back({r, *srun_.exit_status()});
    return exits;
  }
  const std::optional<ExitStatus>& exit_status(int) const override { return srun_.exit_status(); }

  // srun forwards most signals to every task; on SIGTERM (and SIGKILL, which
  // srun cannot catch, so it is sent as SIGTERM) it kills the whole step.
  void signal(int signal) override {
    if (srun_.exit_status()) return;
    killed_ = true;
    ::kill(srun_.pid(), signal == SIGKILL ? SIGTERM : signal);
  }

  void kill_and_wait() override {
    signal(SIGTERM);
    const auto deadline = Clock::now() + kCancelWait;
    while (!srun_.exit_status() && !srun_.try_reap()) {
      if (Clock::now() > deadline) ::kill(srun_.pid(), SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    end();
  }

 private:
  // Gives the CPUs and GPUs back; a step that failed, or had to be killed, makes its
  // nodes suspected; any other has Slurm's word on its nodes checked.
  void end() {
    if (std::exchange(ended_, true)) return;
    for (int node : nodes_) {
      state_->allocation.nodes[node].used -= cpus_;
      state_->allocation.nodes[node].gpus_used -= gpus_;
    }
    if (killed_ || (srun_.exit_status() && !srun_.exit_status()->ok())) {
      state_->suspect(nodes_);
    } else {
      state_->step_ended(nodes_);
    }
  }

  std::shared_ptr<detail::SlurmState> state_;
  std::vector<int> nodes_;  // rank r's node
  int cpus_;                // per rank
  int gpus_;                // per rank
  bool killed_ = false;     // signalled before srun ended
  bool ended_ = false;      // its CPUs and GPUs were given back
  ChildProcess srun_;
};

}  // namespace

SlurmAllocation read_slurm_allocation() {
  SlurmAllocation allocation{require_env("SLURM_JOB_ID"), {}};
  const auto names = expand_hostnames(require_env("SLURM_JOB_NODELIST"), "SLURM_JOB_NODELIST");
  const auto cpus = parse_cpus_per_node(require_env("SLURM_JOB_CPUS_PER_NODE"));
  if (cpus.size() != names.size()) {
    throw ConfigError(fmt::format("SLURM_JOB_CPUS_PER_NODE names {} nodes, SLURM_JOB_NODELIST {}",
                                  cpus.size(), names.size()));
  }
  for (size_t i = 0; i < names.size(); ++i) allocation.nodes.push_back({names[i], cpus[i], 0});
  read_job_gpus(allocation);
  return allocation;
}

SlurmLauncher::SlurmLauncher(SlurmAllocation allocation)
    : state_(std::make_shared<detail::SlurmState>()) {
  state_->allocation = std::move(allocation);
  state_->poll_slurm();
}

SlurmLauncher::~SlurmLauncher() = default;

std::optional<double> SlurmLauncher::total_cpus() const { return state_->allocation.total_cpus(); }

std::optional<int> SlurmLauncher::total_gpus() const { return state_->allocation.total_gpus(); }

const SlurmAllocation& SlurmLauncher::allocation() const { return state_->allocation; }

std::vector<std::string> SlurmLauncher::take_notices() {
  return std::exchange(state_->notices, {});
}

bool SlurmLauncher::can_place(const Resources& per_rank) const {
  state_->refresh();
  const auto& nodes = state_->allocation.nodes;
  const int ranks = per_rank.num_workers;
  const int cpus = std::max(1, static_cast<int>(std::ceil(per_rank.cpus_per_worker)));
  const int gpus = per_rank.gpus_per_worker;
  if (could_ever_place(nodes, ranks, cpus, gpus))
    return !place_ranks(nodes, ranks, cpus, gpus).empty();
  std::vector<SlurmNode> all = nodes;
  for (auto& node : all) node.health = NodeHealth::kUsable;
  if (!could_ever_place(all, ranks, cpus, gpus)) {
    std::vector<std::string> sizes;
    for (const auto& node : nodes) {
      sizes.push_back(fmt::format("{} has {} CPUs, {} GPUs", node.name, node.cpus, node.gpus));
    }
    throw ConfigError(fmt::format(
        "a group of {} ranks x {} CPUs x {} GPUs does not fit in allocation {} ({}): each "
        "rank's CPUs and GPUs must be on one node; ask Slurm for bigger nodes or more of them, "
        "or lower num_workers, cpus_per_worker or gpus_per_worker",
        ranks, cpus, gpus, state_->allocation.job_id, fmt::join(sizes, "; ")));
  }
  std::vector<std::string> retired;
  for (const auto& node : nodes) {
    if (node.health == NodeHealth::kRetired) retired.push_back(node.name);
  }
  throw Error(fmt::format(
      "no node left in allocation {} can hold a group of {} ranks x {} CPUs x {} GPUs: {} failed "
      "twice and are not used again; resume the experiment in a new allocation",
      state_->allocation.job_id, ranks, cpus, gpus, fmt::join(retired, ", ")));
}

Json SlurmLauncher::describe_nodes() const {
  Json nodes = Json::array();
  for (const auto& node : state_->allocation.nodes) {
    nodes.push_back(
        {{"name", node.name},
         {"cpus", node.cpus},
         {"cpus_used", node.used},
         {"gpus", node.gpus},
         {"gpus_used", node.gpus_used},
         {"health", node.slurm_down && node.health == NodeHealth::kUsable ? "down in Slurm"
                                                                          : to_string(node.health)},
         {"failures", node.failures}});
  }
  return nodes;
}

void SlurmLauncher::check_storage(const std::filesystem::path& experiment_dir) {
  state_->poll_slurm();
  std::vector<std::string> names;
  for (const auto& node : state_->allocation.nodes) {
    if (node.usable()) names.push_back(node.name);
  }
  if (names.empty()) throw Error("no node of the allocation is up (sinfo)");
  const auto dir = std::filesystem::absolute(experiment_dir) / ".storage_probe";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string token = fmt::format("{:016x}{:016x}", std::random_device{}(),
                                        Clock::now().time_since_epoch().count());
  {
    std::ofstream out(dir / "token");
    out << token;
    if (!out.flush()) throw StorageError(fmt::format("cannot write {}", (dir / "token").string()));
  }
  // Each node copies the controller's token into a file named after itself.
  SpawnOptions spawn;
  spawn.argv = state_->srun_argv(
      {"--job-name=tunerun-storage-probe", fmt::format("--nodelist={}", fmt::join(names, ",")),
       fmt::format("--nodes={}", names.size()), fmt::format("--ntasks={}", names.size()),
       "--ntasks-per-node=1", "--overlap", "sh", "-c",
       R"(cat "$0/token" > "$0/seen_$SLURMD_NODENAME")", dir.string()});
  spawn.env = environment();
  spawn.log_file = dir / "srun.log";
  ChildProcess srun = ChildProcess::spawn(spawn);
  wait_ok(srun, detail::SlurmState::kProbeTimeout);
  std::vector<std::string> blind;
  for (const auto& name : names) {
    std::ifstream in(dir / ("seen_" + name));
    std::string seen;
    std::getline(in, seen);
    if (seen != token) blind.push_back(name);
  }
  if (blind.empty()) {
    std::filesystem::remove_all(dir);
    return;
  }
  throw StorageError(fmt::format(
      "the experiment directory {} is not shared with node(s) {}: a file the controller wrote "
      "there was not seen from them, or what they wrote did not come back (srun: {}). Put "
      "storage_path on a filesystem every node of the allocation mounts",
      std::filesystem::absolute(experiment_dir).string(), fmt::join(blind, ", "),
      srun.exit_status()->describe()));
}

std::unique_ptr<LaunchedGroup> SlurmLauncher::launch(const GroupLaunch& launch) {
  const int ranks = static_cast<int>(launch.ranks.size());
  const int cpus = std::max(1, static_cast<int>(std::ceil(launch.resources.cpus_per_worker)));
  const int gpus = launch.resources.gpus_per_worker;
  state_->refresh();
  auto& allocation = state_->allocation;
  std::vector<int> nodes = place_ranks(allocation.nodes, ranks, cpus, gpus);
  if (nodes.empty()) {
    throw Error(
        fmt::format("no room for {} ranks of {} CPUs and {} GPUs on the allocation's nodes now",
                    ranks, cpus, gpus));
  }
  // Rank r runs on line r of the hosts file (--distribution=arbitrary).
  const auto log_dir = launch.ranks.at(0).log_file.parent_path();
  const auto hosts_file = log_dir / "srun_hosts";
  std::vector<std::string> hosts;
  {
    std::ofstream out(hosts_file, std::ios::trunc);
    for (int node : nodes) {
      hosts.push_back(allocation.nodes[node].name);
      out << hosts.back() << '\n';
    }
    if (!out) throw StorageError(fmt::format("cannot write {}", hosts_file.string()));
  }
  std::vector<int> distinct = nodes;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());

  SpawnOptions spawn;
  spawn.argv = state_->srun_argv(
      {"--job-name=" + launch.trial_id, fmt::format("--nodes={}", distinct.size()),
       fmt::format("--ntasks={}", ranks), "--distribution=arbitrary", "--exclusive",
       fmt::format("--cpus-per-task={}", cpus), "--kill-on-bad-exit=0", "--open-mode=append",
       "--output=" + (log_dir / "rank_%t.log").string()});
  // Slurm 22.05 binds --gpus-per-task per task: each task's CUDA_VISIBLE_DEVICES
  // names its own devices. In a step asking none Slurm unsets the variable,
  // which CUDA reads as "every device": `env` empties it, so that no rank
  // uses a GPU another holds (without cgroups nothing else stops it).
  if (gpus > 0) spawn.argv.push_back(fmt::format("--gpus-per-task={}", gpus));
  if (gpus == 0 && allocation.total_gpus() > 0) {
    spawn.argv.insert(spawn.argv.end(), {find_program("env"), "CUDA_VISIBLE_DEVICES="});
  }
  spawn.argv.insert(spawn.argv.begin(), {find_program("setpriv"), "--pdeathsig", "TERM", "--"});
  spawn.argv.insert(spawn.argv.end(), launch.argv.begin(), launch.argv.end());
  spawn.env = launch.env;
  set_variable(spawn.env, "SLURM_HOSTFILE", hosts_file.string());
  set_variable(spawn.env, train::kEnvParentPid, "0");  // the tasks' parent is a slurmstepd
  set_variable(spawn.env, "MASTER_ADDR", hosts.front());
  set_variable(spawn.env, train::kEnvRankHosts, fmt::format("{}", fmt::join(hosts, ",")));
  spawn.log_file = log_dir / "srun.log";
  spawn.working_dir = launch.working_dir;
  // The step's command line heads its output: the record of what each rank holds.
  std::ofstream(spawn.log_file, std::ios::app) << fmt::format("{}\n", fmt::join(spawn.argv, " "));
  ChildProcess srun = ChildProcess::spawn(spawn);
  for (int node : nodes) {
    allocation.nodes[node].used += cpus;
    allocation.nodes[node].gpus_used += gpus;
  }
  return std::make_unique<SlurmGroup>(state_, std::move(nodes), cpus, gpus, std::move(srun));
}

}  // namespace tune
