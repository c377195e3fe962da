// `tunerun simulate SWEEP.toml --workers N`: runs a sweep on simulated ranks
// (launcher "sim", tune/launch/sim/) and says how fast it found what: the span of
// simulated time, the trials started, the best value of the metric, and the
// simulated hours until the results first reached each target quality.
//
// --workers N sizes the simulated cluster so that N ranks run at once: N /
// num_workers nodes (rounded up), each holding one trial's ranks (num_workers
// x cpus_per_worker CPUs, num_workers x gpus_per_worker GPUs), the pool being
// theirs. Without it, [simulation]'s nodes stay. --time virtual (the
// default) runs in the simulation's clock where this build has [simulation]
// time; --seed S seeds the searcher and the simulation alike.
//
// Times come from the database the run writes (trials' started_at, results'
// timestamps), which in virtual time are the simulation's. Exit codes as
// `tunerun run`; the summary is printed (even with -q) whenever the
// experiment ran.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "storage/experiment_store.h"
#include "tune/cli/commands.h"
#include "tune/cli/run_experiment.h"
#include "tune/spec/fields.h"
#include "tune/spec/sweep_file.h"

namespace tune::cli {
namespace {

struct SimulateOptions {
  std::string sweep_file;
  std::string storage_path;  // overrides the file's when set
  std::string name;          // overrides the file's when set
  int workers = 0;           // 0: [simulation]'s nodes
  std::string time = "virtual";
  std::optional<uint64_t> seed;
  std::vector<double> targets;  // empty: fractions of the best
  OutputOptions output;
};

// Targets where none are given: these fractions of the best value (for
// "min", the best divided by them).
constexpr double kTargetFractions[] = {0.9, 0.95, 0.99};

// The spec as the command line says: the simulated launcher, its nodes, its
// clock, the seed.
ExperimentSpec simulated(const SimulateOptions& options) {
  ExperimentSpec spec = load_sweep_file(options.sweep_file);
  if (!options.storage_path.empty()) spec.storage_path = options.storage_path;
  if (!options.name.empty()) spec.name = options.name;
  spec.cluster.launcher = "sim";
  if (options.workers > 0) {
    const Resources& r = spec.trainable;
    spec.simulation.nodes = (options.workers + r.num_workers - 1) / r.num_workers;
    spec.simulation.cpus_per_node =
        static_cast<int>(std::ceil(r.num_workers * r.cpus_per_worker - 1e-9));
    spec.simulation.gpus_per_node = r.num_workers * r.gpus_per_worker;
    spec.total_cpus = 0;  // the nodes'
    spec.total_gpus = -1;
  }
  if (options.seed) spec.seed = spec.simulation.seed = *options.seed;
  spec.simulation.time = options.time;
  return spec;
}

// What the run found, from its database.
struct Found {
  double start = 0;  // the first trial's start
  double end = 0;    // the last result or trial end
  int64_t trials_started = 0;
  int64_t results = 0;
  // (when, value) of each result with a finite value of the metric, by time.
  std::vector<std::pair<double, double>> values;
};

Found read_found(const ExperimentSpec& spec) {
  const auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  Found found;
  found.start = std::numeric_limits<double>::infinity();
  for (const auto& trial : store.trials()) {
    if (!trial.started_at) continue;
    ++found.trials_started;
    found.start = std::min(found.start, *trial.started_at);
    if (trial.finished_at) found.end = std::max(found.end, *trial.finished_at);
    for (const auto& result : store.results(trial.trial_id)) {
      ++found.results;
      found.end = std::max(found.end, result.timestamp);
      const Json* value = spec.metric.empty() || !result.metrics.contains(spec.metric)
                              ? nullptr
                              : &result.metrics[spec.metric];
      if (value && value->is_number() && std::isfinite(value->get<double>())) {
        found.values.emplace_back(result.timestamp, value->get<double>());
      }
    }
  }
  if (found.trials_started == 0) found.start = found.end = 0;
  std::sort(found.values.begin(), found.values.end());
  return found;
}

// "41.27 h (148572 s)"; a short span's seconds keep three digits.
std::string hours(double seconds) {
  const int decimals = seconds >= 100 ? 0 : seconds >= 1 ? 1 : 3;
  return fmt::format("{:.2f} h ({:.{}f} s)", seconds / 3600, seconds, decimals);
}

void print_found(const ExperimentSpec& spec, const SimulateOptions& options, const Found& found,
                 bool virtual_time) {
  const SimulationSpec& sim = spec.simulation;
  fmt::print("\nSimulated {} nodes x {} CPUs, {} time: span {}, {} trials started, {} results\n",
             sim.nodes, sim.cpus_per_node, virtual_time ? "virtual" : "real",
             hours(found.end - found.start), found.trials_started, found.results);
  if (found.values.empty()) {
    if (!spec.metric.empty()) fmt::print("No result reported {}\n", spec.metric);
    return;
  }
  const bool max = spec.mode == Mode::kMax;
  auto better_or_equal = [max](double a, double b) { return max ? a >= b : a <= b; };
  double best = found.values.front().second;
  double best_at = found.values.front().first;
  for (const auto& [when, value] : found.values) {
    if (!better_or_equal(best, value)) {
      best = value;
      best_at = when;
    }
  }
  fmt::print("Best {} {:.5f}, first reached at {}\n", spec.metric, best,
             hours(best_at - found.start));
  std::vector<double> targets = options.targets;
  if (targets.empty()) {
    for (double f : kTargetFractions) targets.push_back(max ? best * f : best / f);
  }
  for (double target : targets) {
    const auto hit = std::find_if(found.values.begin(), found.values.end(),
                                  [&](const auto& v) { return better_or_equal(v.second, target); });
    fmt::print("Time to {} {} {:.5f}: {}\n", spec.metric, max ? ">=" : "<=", target,
               hit == found.values.end() ? "never" : hours(hit->first - found.start));
  }
}

void simulate(const SimulateOptions& options) {
  const ExperimentSpec spec = simulated(options);
  const bool virtual_time = spec.simulation.virtual_time();
  try {
    run_experiment(spec, options.output, {}, {});
  } catch (const ExitRequest&) {
    print_found(spec, options, read_found(spec), virtual_time);
    throw;
  }
  print_found(spec, options, read_found(spec), virtual_time);
}

}  // namespace

void setup_simulate(CLI::App& app) {
  auto options = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Run a sweep on simulated workers and report the simulated time to quality");
  cmd->add_option("sweep", options->sweep_file, "Sweep file (TOML)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--workers", options->workers,
                  "Simulated ranks running at once: N / num_workers nodes of one trial's "
                  "size (default: [simulation] nodes)")
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            // The nodes they make are bounded as [simulation] nodes is.
            int64_t n = 0;
            if (!CLI::detail::lexical_cast(text, n) || n < 1 || n > 100000) {
              return fmt::format(
                  "must be a whole number of ranks from 1 to 100000, "
                  "got {}",
                  text);
            }
            return {};
          },
          "1..100000"));
  cmd->add_option("--time", options->time,
                  "virtual (the default): the simulation's clock, no waiting; "
                  "real: the host's")
      ->check(CLI::IsMember({"virtual", "real"}));
  cmd->add_option("--seed", options->seed, "Seeds the searcher and the simulation");
  cmd->add_option("--targets", options->targets,
                  "Qualities of the metric to time, e.g. 0.90,0.92 (default: 90%, 95% and 99% "
                  "of the best)")
      ->delimiter(',');
  cmd->add_option("--storage-path", options->storage_path,
                  "Directory that holds experiments (overrides the file's storage_path)");
  cmd->add_option("--name", options->name, "Experiment name (overrides the file's name)");
  add_output_options(cmd, options->output);
  cmd->callback([options] { simulate(*options); });
}

}  // namespace tune::cli
