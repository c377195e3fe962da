// `tunerun resume EXPERIMENT_DIR`: continues an experiment that was
// interrupted, killed or stopped by fail_fast, from what its database and
// checkpoints hold (see ControllerOptions::resume).

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "storage/experiment_store.h"
#include "tune/cli/commands.h"
#include "tune/cli/run_experiment.h"
#include "tune/spec/sweep_file.h"

namespace tune::cli {
namespace {

struct ResumeOptions {
  std::string experiment_dir;
  bool resume_errored = false;
  bool restart_errored = false;
  OutputOptions output;
  ClusterOptions cluster;
};

// The spec the experiment was started with, from the sweep text it stored.
ExperimentSpec stored_spec(const std::filesystem::path& dir) {
  Json stored;
  try {
    auto store = storage::ExperimentStore::open_read_only(dir);
    auto experiment = store.experiment();
    if (!experiment) throw StorageError(fmt::format("{} holds no experiment", dir.string()));
    stored = experiment->spec;
  } catch (const StorageError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    throw ExitRequest{kExitBadInput};
  }
  if (stored.value("sweep_text", std::string()).empty()) {
    fmt::print(stderr,
               "error: {} was not started from a sweep file; restore it from the C++ API "
               "(tune::Tuner::restore)\n",
               dir.string());
    throw ExitRequest{kExitBadInput};
  }
  ExperimentSpec spec = parse_sweep(stored["sweep_text"].get<std::string>(),
                                    stored.value("sweep_file", std::string("sweep.toml")));
  spec.name = dir.filename().string();
  spec.storage_path = dir.parent_path();
  return spec;
}

void resume(const ResumeOptions& options) {
  auto dir = std::filesystem::absolute(options.experiment_dir).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();
  run_experiment(stored_spec(dir), options.output, options.cluster,
                 ControllerOptions{.resume = true,
                                   .resume_errored = options.resume_errored,
                                   .restart_errored = options.restart_errored});
}

}  // namespace

void setup_resume(CLI::App& app) {
  auto options = std::make_shared<ResumeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "resume", "Continue an interrupted or crashed experiment where it stopped");
  cmd->add_option("experiment", options->experiment_dir, "Experiment directory (runs/NAME)")
      ->required()
      ->check(CLI::ExistingDirectory);
  auto* errored = cmd->add_flag("--resume-errored", options->resume_errored,
                                "Retry trials that ended in ERROR from their latest checkpoint");
  cmd->add_flag("--restart-errored", options->restart_errored,
                "Retry trials that ended in ERROR from scratch")
      ->excludes(errored);
  add_output_options(cmd, options->output);
  add_cluster_options(cmd, options->cluster);
  cmd->callback([options] { resume(*options); });
}

}  // namespace tune::cli
