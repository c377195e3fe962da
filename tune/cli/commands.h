// The `tunerun` subcommands, one file each (CLI11's subcom_in_files
// pattern): setup_X adds the subcommand and its options to the app and sets
// the callback that runs it.
//
// Exit codes: 0 success; 1 the experiment ran but some trial ended in ERROR;
// 2 bad input (command line, sweep file, missing experiment); 3 a failure of
// tunerun itself (storage, sockets, processes); 130 interrupted (SIGINT,
// SIGTERM or fail_fast), resumable with `tunerun resume`.
#pragma once

#include <CLI/CLI.hpp>

#include "tune/controller.h"

namespace tune::cli {

inline constexpr int kExitTrialErrors = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 3;
inline constexpr int kExitInterrupted = 130;

// Thrown by a subcommand callback to end the program with `code` after it
// has printed what the user needs.
struct ExitRequest {
  int code;
};

// What `run` and `resume` print while the experiment runs.
struct OutputOptions {
  int verbosity = 1;
  ProgressMode progress = ProgressMode::kAuto;
};
// Adds -q/--quiet, -v/--verbose and --progress auto|live|plain to `cmd`.
void add_output_options(CLI::App* cmd, OutputOptions& options);

// Where `run` and `resume` start ranks: --launcher local|slurm|auto (auto:
// slurm inside a Slurm allocation, SLURM_JOB_ID set) and --control-address,
// the address the nodes reach the controller at.
// Override the sweep file's [cluster] section when given.
struct ClusterOptions {
  std::string launcher;         // empty: the file's (auto by default)
  std::string control_address;  // empty: the file's; else 127.0.0.1 locally (required with slurm)
};
void add_cluster_options(CLI::App* cmd, ClusterOptions& options);

void setup_run(CLI::App& app);
void setup_resume(CLI::App& app);
void setup_results(CLI::App& app);
void setup_validate(CLI::App& app);
void setup_best(CLI::App& app);
void setup_status(CLI::App& app);
void setup_dashboard(CLI::App& app);
void setup_report(CLI::App& app);

// Runs an experiment the way `run` and `resume` do: signals handled, the
// progress shown as `output` says, the summary printed, the exit code chosen
// (by ExitRequest).
void run_experiment(const ExperimentSpec& spec, const OutputOptions& output,
                    const ClusterOptions& cluster, ControllerOptions options);
void print_summary(const ExperimentSpec& spec, const ExperimentSummary& summary);

}  // namespace tune::cli
