// SlurmLauncher (tune/launch/slurm/launcher.h): a trial group as one srun job step,
// placed on the allocation's nodes; the allocation's nodes and their
// health are tune/launch/slurm/state.h's.
#include "tune/launch/slurm/launcher.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <fstream>
#include <thread>
#include <utility>

#include "core/errors.h"
#include "train/node_ranks.h"
#include "train/worker_env.h"
#include "tune/launch/slurm/group.h"
#include "tune/launch/slurm/state.h"
#include "tune/launch/storage_probe.h"

namespace tune {
namespace {

using detail::environment;
using detail::find_program;
using detail::wait_ok;

// Replaces NAME=... in `env` (getenv takes the first of duplicates).
void set_variable(std::vector<std::string>& env, const std::string& name,
                  const std::string& value) {
  std::erase_if(env, [&](const std::string& var) { return var.starts_with(name + "="); });
  env.push_back(name + "=" + value);
}

}  // namespace

SlurmAllocation read_slurm_allocation() {
  using detail::require_env;
  SlurmAllocation allocation{require_env("SLURM_JOB_ID"), {}};
  const auto names =
      detail::expand_hostnames(require_env("SLURM_JOB_NODELIST"), "SLURM_JOB_NODELIST");
  const auto cpus = parse_cpus_per_node(require_env("SLURM_JOB_CPUS_PER_NODE"));
  if (cpus.size() != names.size()) {
    throw ConfigError(fmt::format("SLURM_JOB_CPUS_PER_NODE names {} nodes, SLURM_JOB_NODELIST {}",
                                  cpus.size(), names.size()));
  }
  for (size_t i = 0; i < names.size(); ++i) allocation.nodes.push_back({names[i], cpus[i], 0});
  detail::read_job_gpus(allocation);
  return allocation;
}

SlurmLauncher::SlurmLauncher(SlurmAllocation allocation, double poll_s, double node_wait_s,
                             double end_margin_s)
    : state_(std::make_shared<detail::SlurmState>()),
      node_wait_(
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(node_wait_s))),
      end_margin_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(end_margin_s))) {
  state_->allocation = std::move(allocation);
  state_->poll_period =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(poll_s));
  state_->poll_slurm();
}

SlurmLauncher::~SlurmLauncher() = default;

std::optional<double> SlurmLauncher::total_cpus() const { return state_->allocation.total_cpus(); }

std::optional<int> SlurmLauncher::total_gpus() const { return state_->allocation.total_gpus(); }

const SlurmAllocation& SlurmLauncher::allocation() const { return state_->allocation; }

std::vector<std::string> SlurmLauncher::take_notices() {
  return std::exchange(state_->notices, {});
}

namespace {

// "n1: 2 CPUs (1 in use), 0 GPUs, usable", for messages.
std::string node_state(const SlurmNode& node) {
  return fmt::format("{}: {} CPUs ({} in use), {} GPUs ({} in use), {}", node.name, node.cpus,
                     node.used, node.gpus, node.gpus_used,
                     node.slurm_down && node.health == NodeHealth::kUsable
                         ? "down in Slurm"
                         : to_string(node.health));
}

// What `strategy` asks, for messages.
std::string_view strategy_means(PlacementStrategy strategy) {
  switch (strategy) {
    case PlacementStrategy::kPack:
      return "PACK";
    case PlacementStrategy::kSpread:
      return "SPREAD";
    case PlacementStrategy::kStrictPack:
      return "STRICT_PACK: every rank on one node";
    case PlacementStrategy::kStrictSpread:
      return "STRICT_SPREAD: every rank on a node of its own";
  }
  return "?";
}

}  // namespace

bool SlurmLauncher::can_place(const Resources& per_rank) const {
  state_->refresh();
  if (!state_->job_end.empty()) return false;  // stop_reason() says why
  const auto& nodes = state_->allocation.nodes;
  const int ranks = per_rank.num_workers;
  const int cpus = std::max(1, static_cast<int>(std::ceil(per_rank.cpus_per_worker)));
  const int gpus = per_rank.gpus_per_worker;
  const PlacementStrategy strategy = per_rank.placement_strategy;
  if (could_ever_place(nodes, ranks, cpus, gpus, strategy)) {
    if (!place_ranks(nodes, ranks, cpus, gpus, strategy).empty()) {
      state_->stuck_since.reset();
      return true;
    }
    note_if_stuck(ranks, cpus, gpus, strategy);
    return false;
  }
  std::vector<std::string> states;
  for (const auto& node : nodes) states.push_back(node_state(node));
  std::vector<SlurmNode> all = nodes;
  for (auto& node : all) node.health = NodeHealth::kUsable;
  if (!could_ever_place(all, ranks, cpus, gpus, strategy)) {
    throw ConfigError(fmt::format(
        "a group of {} ranks x {} CPUs x {} GPUs does not fit in allocation {} as {} ({}): "
        "each rank's CPUs and GPUs must be on one node; ask Slurm for bigger nodes or more of "
        "them, or lower num_workers, cpus_per_worker or gpus_per_worker{}",
        ranks, cpus, gpus, state_->allocation.job_id, strategy_means(strategy),
        fmt::join(states, "; "),
        strategy == PlacementStrategy::kStrictPack || strategy == PlacementStrategy::kStrictSpread
            ? ", or choose placement_strategy PACK or SPREAD"
            : ""));
  }
  throw Error(fmt::format(
      "no node left in allocation {} can hold a group of {} ranks x {} CPUs x {} GPUs ({}): {}; "
      "nodes that failed twice, or that Slurm took out of the allocation, are not used again: "
      "resume the experiment in a new allocation",
      state_->allocation.job_id, ranks, cpus, gpus, strategy_means(strategy),
      fmt::join(states, "; ")));
}

// A group that would not fit on the nodes that are up even were they
// free waits for a node to come back: for node_wait_s at most
// (stop_reason()). One that fits there waits for running groups to end.
void SlurmLauncher::note_if_stuck(int ranks, int cpus, int gpus, PlacementStrategy strategy) const {
  std::vector<SlurmNode> freed = state_->allocation.nodes;
  for (auto& node : freed) {
    node.used = 0;
    node.gpus_used = 0;
  }
  const auto now = Clock::now();
  if (!place_ranks(freed, ranks, cpus, gpus, strategy).empty()) {
    state_->stuck_since.reset();
    return;
  }
  // Not asked for a while (no trial waited): the wait begins anew.
  if (!state_->stuck_since || now - state_->stuck_seen > std::chrono::seconds(30)) {
    state_->stuck_since = now;
  }
  state_->stuck_seen = now;
  std::vector<std::string> states;
  for (const auto& node : state_->allocation.nodes) states.push_back(node_state(node));
  state_->stuck_reason = fmt::format(
      "no node of allocation {} that is up can hold a group of {} ranks x {} CPUs x {} GPUs "
      "({}): {}",
      state_->allocation.job_id, ranks, cpus, gpus, strategy_means(strategy),
      fmt::join(states, "; "));
}

std::string SlurmLauncher::stop_reason() {
  const auto now = Clock::now();
  std::string why;
  if (!state_->job_end.empty()) {
    why = state_->job_end;
  } else if (state_->ends_at && end_margin_ > Clock::duration::zero() &&
             now >= *state_->ends_at - end_margin_) {
    why = fmt::format(
        "allocation {} reaches its time limit in {:.0f} s (cluster.end_margin_s = {:g})",
        state_->allocation.job_id,
        std::max(0.0, std::chrono::duration<double>(*state_->ends_at - now).count()),
        std::chrono::duration<double>(end_margin_).count());
  } else if (state_->stuck_since && now - state_->stuck_seen < std::chrono::seconds(30) &&
             now - *state_->stuck_since >= node_wait_) {
    why = fmt::format("trials waited {:.0f} s (cluster.node_wait_s): {}",
                      std::chrono::duration<double>(now - *state_->stuck_since).count(),
                      state_->stuck_reason);
  }
  if (why.empty()) return why;
  return fmt::format(
      "{}; resume it in a new allocation: salloc --nodes={} --exclusive --no-kill tunerun resume "
      "{}",
      why, state_->allocation.nodes.size(),
      state_->experiment_dir.empty() ? std::string("EXPERIMENT_DIR")
                                     : state_->experiment_dir.string());
}

int SlurmLauncher::max_ranks(const Resources& per_rank) const {
  if (!can_place(per_rank.smallest())) return 0;
  const int cpus = std::max(1, static_cast<int>(std::ceil(per_rank.cpus_per_worker)));
  for (int ranks = per_rank.num_workers; ranks > per_rank.fewest_workers(); --ranks) {
    if (!place_ranks(state_->allocation.nodes, ranks, cpus, per_rank.gpus_per_worker,
                     per_rank.placement_strategy)
             .empty()) {
      return ranks;
    }
  }
  return per_rank.fewest_workers();
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
         {"failures", node.failures},
         {"allocation", state_->allocation.job_id}});
  }
  return nodes;
}

void SlurmLauncher::poll() { state_->refresh(); }

void SlurmLauncher::restore_nodes(const Json& nodes) {
  if (!nodes.is_array()) return;
  for (const Json& record : nodes) {
    if (!record.is_object() || !record.value("name", Json()).is_string()) continue;
    const int node = state_->allocation.find(record["name"].get<std::string>());
    const Json failures = record.value("failures", Json(0));
    if (node >= 0 && failures.is_number_integer()) {
      restore_node(state_->allocation.nodes[node], failures.get<int>(),
                   record.value("allocation", Json()) == Json(state_->allocation.job_id));
    }
  }
}

// One probe step per node, all at once: a node whose step cannot run
// (dead, though Slurm does not know yet) is skipped and suspected, not
// taken for a node that does not share the directory.
void SlurmLauncher::check_storage(const std::filesystem::path& experiment_dir) {
  state_->experiment_dir = std::filesystem::absolute(experiment_dir);
  state_->poll_slurm();
  std::vector<int> probed;
  std::vector<std::string> skipped;
  for (size_t i = 0; i < state_->allocation.nodes.size(); ++i) {
    const SlurmNode& node = state_->allocation.nodes[i];
    if (node.usable()) {
      probed.push_back(static_cast<int>(i));
    } else {
      skipped.push_back(fmt::format(
          "{} ({})", node.name,
          node.slurm_down ? "Slurm reports it down or drained" : to_string(node.health)));
    }
  }
  const StorageProbe probe = StorageProbe::write(experiment_dir);
  const std::filesystem::path& dir = probe.dir;
  // Each node copies the controller's token into a file named after itself;
  // the step exits 0 whenever it ran, so that srun's failure means it did not.
  std::vector<ChildProcess> steps;
  for (int node : probed) {
    const std::string& name = state_->allocation.nodes[node].name;
    SpawnOptions spawn;
    spawn.argv =
        state_->srun_argv({"--job-name=tunerun-storage-probe", "--nodelist=" + name, "--nodes=1",
                           "--ntasks=1", "--overlap", "sh", "-c",
                           R"(cat "$0/token" > "$0/seen_$SLURMD_NODENAME" || true)", dir.string()});
    spawn.env = environment();
    spawn.log_file = dir / ("srun_" + name + ".log");
    steps.push_back(ChildProcess::spawn(spawn));
  }
  std::vector<std::string> blind, unreachable;
  for (size_t k = 0; k < probed.size(); ++k) {
    SlurmNode& node = state_->allocation.nodes[probed[k]];
    const bool ran = wait_ok(steps[k], detail::SlurmState::kProbeTimeout);
    if (probe.seen_in(dir / ("seen_" + node.name))) continue;
    if (ran) {
      blind.push_back(node.name);
      continue;
    }
    // The step did not run there: a node problem, which its health probes decide.
    const std::string said = detail::last_line(dir / ("srun_" + node.name + ".log"));
    unreachable.push_back(fmt::format("{} (a step could not run there: srun {}{}{})", node.name,
                                      steps[k].exit_status()->describe(), said.empty() ? "" : ": ",
                                      said));
    state_->suspect({probed[k]});
  }
  skipped.insert(skipped.end(), unreachable.begin(), unreachable.end());
  if (!blind.empty()) {
    throw StorageError(fmt::format(
        "the experiment directory {} is not shared with node(s) {}: a file the controller wrote "
        "there was not seen from them, or what they wrote did not come back. Put storage_path on "
        "a filesystem every node of the allocation mounts",
        std::filesystem::absolute(experiment_dir).string(), fmt::join(blind, ", ")));
  }
  if (unreachable.size() == probed.size()) {
    throw Error(fmt::format("no node of allocation {} can run a step now: {}",
                            state_->allocation.job_id, fmt::join(skipped, "; ")));
  }
  std::filesystem::remove_all(dir);
  if (!skipped.empty()) {
    state_->note(fmt::format(
        "the storage check skipped node(s) {}; no trial is placed on them until they pass a "
        "probe step",
        fmt::join(skipped, "; ")));
  }
}

std::unique_ptr<LaunchedGroup> SlurmLauncher::launch(const GroupLaunch& launch) {
  const int ranks = static_cast<int>(launch.ranks.size());
  const int cpus = std::max(1, static_cast<int>(std::ceil(launch.resources.cpus_per_worker)));
  const int gpus = launch.resources.gpus_per_worker;
  state_->refresh();
  auto& allocation = state_->allocation;
  std::vector<int> nodes =
      place_ranks(allocation.nodes, ranks, cpus, gpus, launch.resources.placement_strategy);
  if (nodes.empty()) {
    throw Error(fmt::format(
        "no room for {} ranks of {} CPUs and {} GPUs on the allocation's nodes now ({})", ranks,
        cpus, gpus, strategy_means(launch.resources.placement_strategy)));
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
  // Not --quiet: srun's informational lines say that Slurm held the step
  // pending ("step creation temporarily disabled"): its nodes are not
  // suspected then.
  // The step's name is the attempt's own: an earlier attempt's step on a
  // lost node can stay listed a while (SlurmGroup::held_reason).
  const std::string step_name = fmt::format("{}.{}", launch.trial_id, launch.attempt);
  spawn.argv =
      state_->srun_argv({"--job-name=" + step_name, fmt::format("--nodes={}", distinct.size()),
                         fmt::format("--ntasks={}", ranks), "--distribution=arbitrary",
                         // GPUs are Slurm's to bind, per step: those steps stay exclusive.
                         state_->overlap_steps && gpus == 0 ? "--overlap" : "--exclusive",
                         fmt::format("--cpus-per-task={}", cpus), "--kill-on-bad-exit=0",
                         "--open-mode=append", "--output=" + (log_dir / "rank_%t.log").string()},
                        false);
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
  std::error_code no_file;
  const std::uintmax_t log_size = std::filesystem::file_size(spawn.log_file, no_file);
  // The step's command line heads its output: the record of what each rank holds.
  std::ofstream(spawn.log_file, std::ios::app) << fmt::format("{}\n", fmt::join(spawn.argv, " "));
  // Watched before srun starts: a task's end it reports at once is not missed.
  int log_watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (log_watch >= 0 && ::inotify_add_watch(log_watch, spawn.log_file.c_str(), IN_MODIFY) < 0) {
    ::close(log_watch);
    log_watch = -1;
  }
  ChildProcess srun = [&] {
    try {
      return ChildProcess::spawn(spawn);
    } catch (...) {
      if (log_watch >= 0) ::close(log_watch);
      throw;
    }
  }();
  for (int node : nodes) {
    allocation.nodes[node].used += cpus;
    allocation.nodes[node].gpus_used += gpus;
  }
  return detail::make_slurm_group(state_, step_name, std::move(nodes), cpus, gpus, std::move(srun),
                                  spawn.log_file, no_file ? 0 : log_size, log_watch);
}

}  // namespace tune
