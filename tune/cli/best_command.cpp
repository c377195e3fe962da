// `tunerun best EXPERIMENT_DIR`: the best trial by the experiment's metric.

#include <fmt/format.h>

#include <CLI/CLI.hpp>

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

void best(const BestOptions& options) {
  auto store = open_experiment(options.experiment_dir);
  auto experiment = store.experiment();
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
  CLI::App* cmd = app.add_subcommand("best", "Show the best trial of an experiment");
  cmd->add_option("experiment", options->experiment_dir, "Experiment directory (runs/NAME)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("--json", options->json, "Print JSON");
  cmd->callback([options] { best(*options); });
}

}  // namespace tune::cli
