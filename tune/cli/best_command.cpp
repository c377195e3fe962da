// `tunerun best EXPERIMENT_DIR`: the best trial by the experiment's metric;
// with several objectives, the Pareto front (the pareto_front view's rank 0).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cmath>

#include "storage/experiment_store.h"
#include "tune/cli/commands.h"

namespace tune::cli {
namespace {

struct BestOptions {
  std::string experiment_dir;
  bool json = false;
};

storage::ExperimentStore open_experiment(const std::string& dir) {
  try {
    return storage::ExperimentStore::open_read_only(dir);
  } catch (const StorageError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    throw ExitRequest{kExitBadInput};
  }
}

std::string objective_list(const std::vector<Objective>& objectives) {
  std::vector<std::string> parts;
  for (const Objective& o : objectives)
    parts.push_back(fmt::format("{} {}", to_string(o.mode), o.metric));
  return fmt::format("{}", fmt::join(parts, ", "));
}

void front(const BestOptions& options, const storage::ExperimentStore& store,
           const storage::ExperimentRecord& experiment) {
  const auto members = store.pareto_front(true);
  if (members.empty()) {
    fmt::print(stderr, "no feasible trial has reported a value for every objective ({}) yet\n",
               objective_list(experiment.objectives));
    throw ExitRequest{1};
  }
  if (options.json) {
    Json objectives = Json::array();
    for (const Objective& o : experiment.objectives) {
      objectives.push_back({{"metric", o.metric}, {"mode", to_string(o.mode)}});
    }
    Json trials = Json::array();
    for (const auto& m : members) {
      trials.push_back({{"trial_id", m.trial.trial_id},
                        {"values", m.values},
                        {"crowding", std::isfinite(m.crowding) ? Json(m.crowding) : Json("inf")},
                        {"config", m.trial.config},
                        {"last_result", m.last_metrics}});
    }
    fmt::print("{}\n", Json{{"objectives", objectives}, {"front", trials}}.dump(2));
    return;
  }
  fmt::print("Pareto front ({}): {} trial{}\n", objective_list(experiment.objectives),
             members.size(), members.size() == 1 ? "" : "s");
  for (const auto& m : members) {
    std::vector<std::string> values;
    for (const Objective& o : experiment.objectives) {
      values.push_back(fmt::format("{} = {}", o.metric, m.values.value(o.metric, Json()).dump()));
    }
    fmt::print("{} ({}, status {})\n  config: {}\n", m.trial.trial_id, fmt::join(values, ", "),
               to_string(m.trial.status), m.trial.config.dump());
  }
}

void best(const BestOptions& options) {
  auto store = open_experiment(options.experiment_dir);
  auto experiment = store.experiment();
  if (experiment && experiment->objectives.size() > 1) return front(options, store, *experiment);
  auto best = store.best_trial();
  if (!experiment || !best) {
    fmt::print(stderr, "no trial has reported a value for the metric '{}' yet\n",
               experiment ? experiment->metric : "");
    throw ExitRequest{1};
  }
  if (options.json) {
    Json out = {{"trial_id", best->trial.trial_id},    {"metric", experiment->metric},
                {"mode", to_string(experiment->mode)}, {"value", best->value},
                {"config", best->trial.config},        {"last_result", best->last_metrics}};
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("{} ({} {} = {}, status {})\n{}\n", best->trial.trial_id, to_string(experiment->mode),
             experiment->metric, best->value, to_string(best->trial.status),
             best->trial.config.dump(2));
}

}  // namespace

void setup_best(CLI::App& app) {
  auto options = std::make_shared<BestOptions>();
  CLI::App* cmd = app.add_subcommand(
      "best", "Show the best trial of an experiment (with several objectives, the Pareto front)");
  cmd->add_option("experiment", options->experiment_dir, "Experiment directory (runs/NAME)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("--json", options->json, "Print JSON");
  cmd->callback([options] { best(*options); });
}

}  // namespace tune::cli
