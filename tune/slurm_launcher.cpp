#include "tune/slurm_launcher.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <thread>
#include <utility>

#include "core/errors.h"
#include "train/worker_env.h"

namespace tune {
namespace {

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

std::vector<std::string> expand_hostnames(const std::string& nodelist) {
  // The list goes into a shell command: only the characters Slurm uses.
  if (nodelist.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                 "-_.,[]") != std::string::npos) {
    throw ConfigError(fmt::format("SLURM_JOB_NODELIST='{}' is not a Slurm node list", nodelist));
  }
  FILE* pipe = popen(fmt::format("scontrol show hostnames '{}'", nodelist).c_str(), "r");
  if (pipe == nullptr) throw Error("cannot run scontrol to expand SLURM_JOB_NODELIST");
  std::vector<std::string> names;
  char line[256];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    std::string name(line);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
    if (!name.empty()) names.push_back(name);
  }
  if (pclose(pipe) != 0 || names.empty()) {
    throw Error(fmt::format("`scontrol show hostnames {}` failed", nodelist));
  }
  return names;
}

// Replaces NAME=... in `env` (getenv takes the first of duplicates).
void set_variable(std::vector<std::string>& env, const std::string& name,
                  const std::string& value) {
  std::erase_if(env, [&](const std::string& var) { return var.starts_with(name + "="); });
  env.push_back(name + "=" + value);
}

// One srun: every rank of the group is one of its tasks.
class SlurmGroup final : public LaunchedGroup {
 public:
  SlurmGroup(std::shared_ptr<SlurmAllocation> allocation, std::vector<int> nodes, int cpus,
             ChildProcess srun)
      : allocation_(std::move(allocation)),
        nodes_(std::move(nodes)),
        cpus_(cpus),
        srun_(std::move(srun)) {}
  ~SlurmGroup() override {
    if (!srun_.exit_status()) kill_and_wait();
    free_cpus();
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
    free_cpus();
    std::vector<RankExit> exits;
    for (int r = 0; r < size(); ++r) exits.push_back({r, *srun_.exit_status()});
    return exits;
  }
  const std::optional<ExitStatus>& exit_status(int) const override { return srun_.exit_status(); }

  // srun forwards most signals to every task; on SIGTERM (and SIGKILL, which
  // srun cannot catch, so it is sent as SIGTERM) it kills the whole step.
  void signal(int signal) override {
    if (srun_.exit_status()) return;
    ::kill(srun_.pid(), signal == SIGKILL ? SIGTERM : signal);
  }

  void kill_and_wait() override {
    signal(SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + kCancelWait;
    while (!srun_.exit_status() && !srun_.try_reap()) {
      if (std::chrono::steady_clock::now() > deadline) ::kill(srun_.pid(), SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    free_cpus();
  }

 private:
  void free_cpus() {
    if (std::exchange(freed_, true)) return;
    for (int node : nodes_) allocation_->nodes[node].used -= cpus_;
  }

  std::shared_ptr<SlurmAllocation> allocation_;
  std::vector<int> nodes_;  // rank r's node
  int cpus_;                // per rank
  bool freed_ = false;      // its CPUs were given back
  ChildProcess srun_;
};

}  // namespace

int SlurmAllocation::total_cpus() const {
  int total = 0;
  for (const auto& node : nodes) total += node.cpus;
  return total;
}

std::vector<int> parse_cpus_per_node(std::string_view text) {
  std::vector<int> counts;
  auto malformed = [&] {
    return ConfigError(
        fmt::format("SLURM_JOB_CPUS_PER_NODE='{}' is malformed; expected e.g. "
                    "'2(x3),1'",
                    text));
  };
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    int cpus = 0, repeat = 1;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), cpus);
    if (ec != std::errc() || cpus <= 0) throw malformed();
    std::string_view tail(end, item.data() + item.size() - end);
    if (!tail.empty()) {
      if (!tail.starts_with("(x") || !tail.ends_with(")")) throw malformed();
      auto [e2, ec2] = std::from_chars(tail.data() + 2, tail.data() + tail.size() - 1, repeat);
      if (ec2 != std::errc() || e2 != tail.data() + tail.size() - 1 || repeat <= 0) {
        throw malformed();
      }
    }
    counts.insert(counts.end(), repeat, cpus);
  }
  if (counts.empty()) throw malformed();
  return counts;
}

SlurmAllocation read_slurm_allocation() {
  SlurmAllocation allocation{require_env("SLURM_JOB_ID"), {}};
  const auto names = expand_hostnames(require_env("SLURM_JOB_NODELIST"));
  const auto cpus = parse_cpus_per_node(require_env("SLURM_JOB_CPUS_PER_NODE"));
  if (cpus.size() != names.size()) {
    throw ConfigError(fmt::format("SLURM_JOB_CPUS_PER_NODE names {} nodes, SLURM_JOB_NODELIST {}",
                                  cpus.size(), names.size()));
  }
  for (size_t i = 0; i < names.size(); ++i) allocation.nodes.push_back({names[i], cpus[i], 0});
  return allocation;
}

std::vector<int> place_ranks(const std::vector<SlurmNode>& nodes, int ranks, int cpus) {
  auto free_on = [&](int i) { return nodes[i].cpus - nodes[i].used; };
  std::vector<int> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  // One node if any holds the whole group: the fullest such (packing).
  int best = -1;
  for (int i : order) {
    if (free_on(i) >= ranks * cpus && (best < 0 || free_on(i) < free_on(best))) best = i;
  }
  if (best >= 0) return std::vector<int>(ranks, best);
  // Else the freest nodes first, as many ranks on each as fit.
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return free_on(a) > free_on(b); });
  std::vector<int> placed;
  for (int i : order) {
    for (int fit = free_on(i) / std::max(cpus, 1);
         fit > 0 && static_cast<int>(placed.size()) < ranks; --fit) {
      placed.push_back(i);
    }
  }
  if (static_cast<int>(placed.size()) < ranks) return {};
  return placed;
}

SlurmLauncher::SlurmLauncher(SlurmAllocation allocation)
    : allocation_(std::make_shared<SlurmAllocation>(std::move(allocation))) {}

std::optional<double> SlurmLauncher::total_cpus() const { return allocation_->total_cpus(); }

const SlurmAllocation& SlurmLauncher::allocation() const { return *allocation_; }

bool SlurmLauncher::can_place(const Resources& per_rank) const {
  const int cpus = static_cast<int>(std::ceil(per_rank.cpus_per_worker));
  return !place_ranks(allocation_->nodes, per_rank.num_workers, cpus).empty();
}

std::unique_ptr<LaunchedGroup> SlurmLauncher::launch(const GroupLaunch& launch) {
  if (launch.resources.gpus_per_worker > 0) {
    throw ConfigError("the slurm launcher does not lend GPUs yet; set gpus_per_worker = 0");
  }
  const int ranks = static_cast<int>(launch.ranks.size());
  const int cpus = std::max(1, static_cast<int>(std::ceil(launch.resources.cpus_per_worker)));
  std::vector<int> nodes = place_ranks(allocation_->nodes, ranks, cpus);
  if (nodes.empty()) {
    throw Error(
        fmt::format("no room for {} ranks of {} CPUs on the allocation's nodes now", ranks, cpus));
  }
  // Rank r runs on line r of the hosts file (--distribution=arbitrary).
  const auto log_dir = launch.ranks.at(0).log_file.parent_path();
  const auto hosts_file = log_dir / "srun_hosts";
  std::vector<std::string> hosts;
  {
    std::ofstream out(hosts_file, std::ios::trunc);
    for (int node : nodes) {
      hosts.push_back(allocation_->nodes[node].name);
      out << hosts.back() << '\n';
    }
    if (!out) throw StorageError(fmt::format("cannot write {}", hosts_file.string()));
  }
  std::vector<int> distinct = nodes;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());

  SpawnOptions spawn;
  spawn.argv = {find_program("setpriv"),
                "--pdeathsig",
                "TERM",
                "--",
                find_program("srun"),
                "--jobid=" + allocation_->job_id,
                "--job-name=" + launch.trial_id,
                fmt::format("--nodes={}", distinct.size()),
                fmt::format("--ntasks={}", ranks),
                "--distribution=arbitrary",
                "--exclusive",
                fmt::format("--cpus-per-task={}", cpus),
                "--kill-on-bad-exit=0",
                "--quiet",
                "--open-mode=append",
                "--output=" + (log_dir / "rank_%t.log").string()};
  spawn.argv.insert(spawn.argv.end(), launch.argv.begin(), launch.argv.end());
  spawn.env = launch.env;
  set_variable(spawn.env, "SLURM_HOSTFILE", hosts_file.string());
  set_variable(spawn.env, train::kEnvParentPid, "0");  // the tasks' parent is a slurmstepd
  set_variable(spawn.env, "MASTER_ADDR", hosts.front());
  spawn.log_file = log_dir / "srun.log";
  spawn.working_dir = launch.working_dir;
  ChildProcess srun = ChildProcess::spawn(spawn);
  for (int node : nodes) allocation_->nodes[node].used += cpus;
  return std::make_unique<SlurmGroup>(allocation_, std::move(nodes), cpus, std::move(srun));
}

}  // namespace tune
