// `tunerun resume EXPERIMENT_DIR`: continues an experiment that was
// interrupted, killed or stopped by fail_fast, from what its database and
// checkpoints hold (see ControllerOptions::resume).

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "storage/experiment_store.h"
#include "tune/cli/commands.h"
#include "tune/cli/run_experiment.h"
#include "tune/launch/make_launcher.h"
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

// Where the last run's ranks reached the controller, when neither the
// command line nor the sweep file says: its interface where this host has
// one of that name (a resume in a new allocation may run on another node),
// else its address.
void apply_stored_cluster(ExperimentSpec& spec, const Json& cluster) {
  if (!cluster.is_object() || !spec.cluster.control_address.empty() ||
      !spec.cluster.control_interface.empty()) {
    return;
  }
  const std::string interface = cluster.value("control_interface", std::string());
  const std::string address = cluster.value("control_address", std::string());
  if (!interface.empty()) {
    try {
      interface_address(interface);
      spec.cluster.control_interface = interface;
      return;
    } catch (const ConfigError&) {  // not on this host: its address, if that is
    }
  }
  if (!address.empty() && !interface_of(address).empty()) spec.cluster.control_address = address;
}

}  // namespace

// The spec the experiment was started with, from the sweep text it stored,
// with the cluster settings its last run took effect with.
ExperimentSpec stored_spec(const std::filesystem::path& dir) {
  Json stored;
  Json cluster;
  try {
    auto store = storage::ExperimentStore::open_read_only(dir);
    auto experiment = store.experiment();
    if (!experiment) throw StorageError(fmt::format("{} holds no experiment", dir.string()));
    stored = experiment->spec;
    cluster = store.state("cluster").value_or(Json());
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
  apply_stored_cluster(spec, cluster);
  return spec;
}

namespace {

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
