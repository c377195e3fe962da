// `tunerun status EXPERIMENT_DIR [--verbose]`: every trial's state and why it
// is in it; with --verbose also what its suggestion cost (the searcher's
// suggest call and, of it, the model fit). Reads the database while an
// experiment runs without blocking it.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>

#include "storage/experiment_store.h"
#include "tune/cli/commands.h"

namespace tune::cli {
namespace {

struct StatusOptions {
  std::string experiment_dir;
  bool verbose = false;  // the suggestion's times beside each trial
};

// Milliseconds, or "-" when not recorded.
std::string ms(const std::optional<double>& seconds) {
  return seconds ? fmt::format("{:.2f}", 1e3 * *seconds) : "-";
}

std::string metric_of(const storage::ExperimentStore& store, const storage::TrialRecord& trial,
                      const std::string& metric) {
  if (metric.empty() || trial.last_iteration == 0) return "";
  auto results = store.results(trial.trial_id);
  if (results.empty() || !results.back().metrics.contains(metric)) return "";
  const Json& v = results.back().metrics[metric];
  return v.is_number() ? fmt::format("{:.6g}", v.get<double>()) : v.dump();
}

// Per host: its CPUs in use and free and its health (when the experiment
// runs on a cluster launcher, which records its nodes), how many ranks ran
// there, and the ranks of running trials there now (their latest attempt),
// with their Slurm steps.
void print_hosts(const storage::ExperimentStore& store,
                 const std::vector<storage::TrialRecord>& trials) {
  const auto placements = store.placements();
  std::map<std::string, int64_t> latest;  // a running trial's latest attempt
  for (const auto& t : trials) {
    if (t.status == TrialStatus::kRunning) latest[t.trial_id] = -1;
  }
  for (const auto& p : placements) {
    auto it = latest.find(p.trial_id);
    if (it != latest.end()) it->second = std::max(it->second, p.attempt);
  }
  struct Host {
    const Json* node = nullptr;  // the launcher's record
    int ran = 0;
    std::vector<std::string> now;
  };
  std::map<std::string, Host> hosts;
  const std::optional<Json> nodes = store.state("nodes");
  if (nodes && nodes->is_array()) {
    for (const auto& node : *nodes) hosts[node.value("name", std::string())].node = &node;
  }
  for (const auto& p : placements) {
    Host& host = hosts[p.host];
    ++host.ran;
    auto it = latest.find(p.trial_id);
    if (it != latest.end() && it->second == p.attempt) {
      host.now.push_back(p.step.empty()
                             ? fmt::format("{}/{}", p.trial_id, p.rank)
                             : fmt::format("{}/{} (step {})", p.trial_id, p.rank, p.step));
    }
  }
  if (hosts.empty()) return;
  fmt::print("\n{:<16} {:>9} {:>9} {:>9} {:<12} {:>9}  {}\n", "host", "CPUs used", "CPUs free",
             "GPUs used", "health", "ranks run", "running now (trial/rank)");
  for (const auto& [name, host] : hosts) {
    std::string used = "-", free = "-", gpus = "-", health = "-";
    if (host.node != nullptr) {
      const Json& n = *host.node;
      const int cpus = n.value("cpus", 0), cpus_used = n.value("cpus_used", 0);
      used = fmt::format("{}/{}", cpus_used, cpus);
      health = n.value("health", std::string("?"));
      free = fmt::format("{}", health == "usable" ? cpus - cpus_used : 0);
      gpus = fmt::format("{}/{}", n.value("gpus_used", 0), n.value("gpus", 0));
    }
    fmt::print("{:<16} {:>9} {:>9} {:>9} {:<12} {:>9}  {}\n", name, used, free, gpus, health,
               host.ran, fmt::join(host.now, ", "));
  }
}

void status(const StatusOptions& options) {
  storage::ExperimentStore store = [&] {
    try {
      return storage::ExperimentStore::open_read_only(options.experiment_dir);
    } catch (const StorageError& e) {
      fmt::print(stderr, "error: {}\n", e.what());
      throw ExitRequest{kExitBadInput};
    }
  }();
  auto experiment = store.experiment();
  if (!experiment) {
    fmt::print(stderr, "error: {} holds no experiment yet\n", options.experiment_dir);
    throw ExitRequest{kExitBadInput};
  }
  auto trials = store.trials();
  std::map<std::string_view, int> counts;
  for (const auto& t : trials) ++counts[to_string(t.status)];
  fmt::print("Experiment {} ({}), {} trials:", experiment->name, to_string(experiment->status),
             trials.size());
  for (const auto& [status, n] : counts) fmt::print(" {} {}", n, status);
  fmt::print("\n");
  const std::string& metric = experiment->metric;
  fmt::print("{:<28} {:<10} {:>5} {:>12}", "trial", "status", "iter",
             metric.empty() ? "metric" : metric);
  if (options.verbose) fmt::print(" {:>10} {:>10}", "suggest ms", "fit ms");
  fmt::print("  reason\n");
  for (const auto& t : trials) {
    fmt::print("{:<28} {:<10} {:>5} {:>12}", t.trial_id, to_string(t.status), t.last_iteration,
               metric_of(store, t, metric));
    if (options.verbose) fmt::print(" {:>10} {:>10}", ms(t.suggest_s), ms(t.model_fit_s));
    fmt::print("  {}\n", t.status == TrialStatus::kError ? t.error : t.status_reason);
  }
  print_hosts(store, trials);
}

}  // namespace

void setup_status(CLI::App& app) {
  auto options = std::make_shared<StatusOptions>();
  CLI::App* cmd = app.add_subcommand("status", "Show every trial of an experiment and its state");
  cmd->add_option("experiment", options->experiment_dir, "Experiment directory (runs/NAME)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("-v,--verbose", options->verbose,
                "Also each trial's suggestion time and the searcher's model-fit time (ms)");
  cmd->callback([options] { status(*options); });
}

}  // namespace tune::cli
