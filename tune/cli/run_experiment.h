// What `run`, `resume` and `simulate` share: their output and cluster
// options, and running an experiment with them (tune/cli/run_command.cpp).
#pragma once

#include <string>

#include "tune/cli/commands.h"
#include "tune/execution/controller.h"

namespace tune::cli {

// What `run` and `resume` print while the experiment runs.
struct OutputOptions {
  int verbosity = 1;
  ProgressMode progress = ProgressMode::kAuto;
};
// Adds -q/--quiet, -v/--verbose and --progress auto|live|plain to `cmd`.
void add_output_options(CLI::App* cmd, OutputOptions& options);

// Where `run` and `resume` start ranks: --launcher local|slurm|auto|sim
// (auto: slurm inside a Slurm allocation, SLURM_JOB_ID set; sim: simulated
// ranks, tune/launch/sim/launcher.h) and --control-address,
// the address the nodes reach the controller at.
// Override the sweep file's [cluster] section when given.
struct ClusterOptions {
  std::string launcher;         // empty: the file's (auto by default)
  std::string control_address;  // empty: the file's; else 127.0.0.1 locally (required with slurm)
};
void add_cluster_options(CLI::App* cmd, ClusterOptions& options);

// Runs an experiment the way `run` and `resume` do: signals handled, the
// progress shown as `output` says, the summary printed, the exit code chosen
// (by ExitRequest).
void run_experiment(const ExperimentSpec& spec, const OutputOptions& output,
                    const ClusterOptions& cluster, ControllerOptions options);
void print_summary(const ExperimentSpec& spec, const ExperimentSummary& summary);

}  // namespace tune::cli
