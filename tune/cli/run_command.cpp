// `tunerun run SWEEP.toml` (or just `tunerun SWEEP.toml`): runs a sweep.
// `tunerun validate SWEEP.toml`: checks a sweep file and writes nothing; with
// --print-config [--json] it prints the effective spec, defaults filled in.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>

#include "storage/experiment_store.h"
#include "train/plugin.h"
#include "tune/cli/commands.h"
#include "tune/cli/run_experiment.h"
#include "tune/execution/controller.h"
#include "tune/launch/make_launcher.h"
#include "tune/spec/hostfile.h"
#include "tune/spec/json.h"
#include "tune/spec/sweep_file.h"
#include "tune/spec/validation.h"
#include "tune/system/executable.h"

namespace tune::cli {
namespace {

struct RunOptions {
  std::string sweep_file;
  std::string storage_path;  // overrides the file's storage_path when set
  std::string name;          // overrides the file's name when set
  OutputOptions output;
  ClusterOptions cluster;
  bool print_config = false;  // validate: print the effective spec instead of a summary
  bool json = false;          // ... as JSON rather than TOML
};

// Checks the sweep file argument. A relative path that names no file here
// but one under the installed data folder (share/tunerun, beside the
// executable's bin/) becomes that file: `tunerun examples/quadratic.toml`
// works from any folder once tunerun is installed.
CLI::Validator sweep_file_check() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        if (std::filesystem::is_regular_file(path)) return {};
        if (std::filesystem::path(path).is_relative()) {
          const auto installed = (std::filesystem::path(self_executable()).parent_path() /
                                  TUNERUN_DATA_DIR_FROM_BIN / path)
                                     .lexically_normal();
          if (std::filesystem::is_regular_file(installed)) {
            path = installed.string();
            return {};
          }
        }
        return "File does not exist: " + path;
      },
      "FILE");
}

ExperimentSpec load(const RunOptions& options) {
  ExperimentSpec spec = load_sweep_file(options.sweep_file);
  if (!options.storage_path.empty()) spec.storage_path = options.storage_path;
  if (!options.name.empty()) spec.name = options.name;
  return spec;
}

}  // namespace

void print_summary(const ExperimentSpec& spec, const ExperimentSummary& s) {
  fmt::print("\nExperiment {}: {} trials ({} TERMINATED, {} ERROR), {} results in {:.2f} s\n",
             spec.name, s.num_trials, s.num_terminated, s.num_errors, s.num_results, s.wall_s);
  const auto db = s.experiment_dir / "experiment.db";
  if (spec.objectives().size() > 1) {
    const auto front =
        storage::ExperimentStore::open_read_only(s.experiment_dir).pareto_front(true);
    fmt::print("Pareto front: {} trials (tunerun best {})\n", front.size(),
               s.experiment_dir.string());
    fmt::print("Results: {}\n  sqlite3 {} 'SELECT * FROM pareto_front WHERE rank = 0'\n",
               db.string(), db.string());
    return;
  }
  if (s.best) {
    fmt::print("Best trial {}: {} = {}\n  config: {}\n", s.best->trial_id, spec.metric,
               s.best->value, s.best->config.dump());
  }
  fmt::print("Results: {}\n  sqlite3 {} 'SELECT * FROM best_trial'\n", db.string(), db.string());
}

void add_output_options(CLI::App* cmd, OutputOptions& options) {
  cmd->add_flag_callback(
      "-q,--quiet", [&options] { options.verbosity = 0; }, "Print nothing but errors");
  cmd->add_flag_callback(
      "-v,--verbose", [&options] { options.verbosity = 2; }, "Print every result");
  cmd->add_option_function<std::string>(
         "--progress",
         [&options](const std::string& text) {
           options.progress = *progress_mode_from_string(text);
         },
         "auto: a live table of the trials when stderr is a terminal, plain lines otherwise; "
         "live: always the table; plain: always lines (NO_COLOR turns colours off)")
      ->check(CLI::IsMember({"auto", "live", "plain"}));
}

void add_cluster_options(CLI::App* cmd, ClusterOptions& options) {
  cmd->add_option("--launcher", options.launcher,
                  "Where ranks run: local (this machine), slurm (job steps in this Slurm "
                  "allocation), auto: slurm when SLURM_JOB_ID is set, sim: simulated ranks on "
                  "the nodes of [simulation], ssh: the hosts of [cluster] hostfile over OpenSSH "
                  "(default: [cluster] launcher in the sweep file, else auto)")
      ->check(CLI::IsMember({"auto", "local", "slurm", "sim", "ssh"}));
  cmd->add_option("--control-address", options.control_address,
                  "The IP address the ranks reach the controller at (with slurm or ssh: one the "
                  "nodes route to; default: [cluster] control_address or control_interface)");
}

namespace {

// What every rank runs: tunerun-worker, beside this executable (a build
// tree) or in the installed plug-in folder. It starts in about half the CPU
// time tunerun takes, which loads the dashboard's HTTP and TLS libraries
// too. tunerun itself, which is a worker as well, where neither is there.
std::vector<std::string> worker_argv() {
  const std::string self = self_executable();
  for (const auto& path : train::builtin_plugin_candidates("tunerun-worker", self)) {
    if (access(path.c_str(), X_OK) == 0) return {path.string()};
  }
  return {self};
}

}  // namespace

namespace {

// The command line's cluster settings over the file's.
void apply_cluster_options(ExperimentSpec& spec, const ClusterOptions& cluster) {
  if (!cluster.launcher.empty()) spec.cluster.launcher = cluster.launcher;
  if (!cluster.control_address.empty()) {
    spec.cluster.control_address = cluster.control_address;
    spec.cluster.control_interface.clear();
  }
}

}  // namespace

void run_experiment(const ExperimentSpec& file_spec, const OutputOptions& output,
                    const ClusterOptions& cluster, ControllerOptions options) {
  // The command line's cluster settings over the file's; the controller
  // chooses the launcher from them (tune/launch/make_launcher.h).
  ExperimentSpec spec = file_spec;
  apply_cluster_options(spec, cluster);
  if (options.worker_argv.empty()) options.worker_argv = worker_argv();
  options.verbosity = output.verbosity;
  options.progress = make_progress_reporter(output.progress);
  options.handle_signals = true;
  TrialController controller(spec, options);
  ExperimentSummary summary;
  try {
    summary = controller.run();
  } catch (const StorageError& e) {
    if (e.cause() != StorageError::Cause::kDiskFull) throw;
    fmt::print(stderr,
               "error: {}\nThe disk holding {} is full. Free some space, then go on where the "
               "experiment stopped:\n  tunerun resume {}\n",
               e.what(), spec.experiment_dir().string(), spec.experiment_dir().string());
    throw ExitRequest{kExitBadInput};
  }
  if (output.verbosity > 0) print_summary(spec, summary);
  if (summary.interrupted) throw ExitRequest{kExitInterrupted};
  if (summary.num_errors > 0) {
    fmt::print(stderr, "{} trial(s) ended in ERROR; see `tunerun status {}`\n", summary.num_errors,
               summary.experiment_dir.string());
    throw ExitRequest{kExitTrialErrors};
  }
}

namespace {

// A batch job Slurm requeued (sbatch --requeue: preempted, or its node
// failed) runs its script again, in a new allocation: the experiment its
// first run began goes on where it paused.
bool requeued_slurm_job() {
  const char* restarts = std::getenv("SLURM_RESTART_COUNT");
  return restarts != nullptr && std::atoi(restarts) > 0;
}

void run(const RunOptions& options) {
  const ExperimentSpec spec = load(options);
  if (requeued_slurm_job() && std::filesystem::exists(spec.experiment_dir() / "experiment.db")) {
    fmt::print(stderr, "Slurm requeued job {} (SLURM_RESTART_COUNT={}): resuming {}\n",
               std::getenv("SLURM_JOB_ID") != nullptr ? std::getenv("SLURM_JOB_ID") : "?",
               std::getenv("SLURM_RESTART_COUNT"), spec.experiment_dir().string());
    run_experiment(spec, options.output, options.cluster, ControllerOptions{.resume = true});
    return;
  }
  run_experiment(spec, options.output, options.cluster, {});
}

}  // namespace

void setup_run(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run the sweep a TOML file describes (the default)");
  cmd->add_option("sweep", options->sweep_file, "Sweep file (TOML)")
      ->required()
      ->transform(sweep_file_check());
  cmd->add_option("--storage-path", options->storage_path,
                  "Directory that holds experiments (overrides the file's storage_path)");
  cmd->add_option("--name", options->name, "Experiment name (overrides the file's name)");
  add_output_options(cmd, options->output);
  add_cluster_options(cmd, options->cluster);
  cmd->callback([options] { run(*options); });
}

void setup_validate(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("validate", "Check a sweep file without running it");
  cmd->add_option("sweep", options->sweep_file, "Sweep file (TOML)")
      ->required()
      ->transform(sweep_file_check());
  cmd->add_flag("--print-config", options->print_config,
                "Print the effective experiment spec, defaults filled in (TOML)");
  cmd->add_flag("--json", options->json, "With --print-config: print JSON");
  add_cluster_options(cmd, options->cluster);
  cmd->callback([options] {
    ExperimentSpec spec = load(*options);
    apply_cluster_options(spec, options->cluster);
    check_storage_path(spec);
    if (spec.cluster.launcher == "ssh") read_hostfile(spec.cluster.hostfile);
    check_control_address(spec);
    if (options->print_config) {
      const Json json = experiment_spec_to_json(spec);
      fmt::print("{}\n", options->json ? json.dump(2) : json_to_toml(json));
      return;
    }
    fmt::print(
        "{}: ok. Experiment '{}', trainable '{}' x {} workers, {} grid cells x "
        "num_samples {}, search '{}', scheduler '{}'\n",
        options->sweep_file, spec.name, spec.trainable.name, spec.trainable.num_workers,
        spec.param_space.num_grid_cells(), spec.num_samples, spec.search_algorithm, spec.scheduler);
  });
}

}  // namespace tune::cli
