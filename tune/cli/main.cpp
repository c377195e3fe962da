// tunerun: run hyperparameter sweeps described in TOML.
//
// The same executable is also every worker: started by a controller with
// TUNERUN_WORKER=1, it runs the worker runtime and never parses arguments.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/errors.h"
#include "train/builtins/builtins.h"
#include "train/worker_env.h"
#include "train/worker_runtime.h"
#include "tune/cli/commands.h"

namespace {

// `tunerun [options] sweep.toml` means `tunerun run [options] sweep.toml`:
// "run" is implied when no argument names a subcommand and one is not an
// option.
std::vector<std::string> with_default_subcommand(int argc, char** argv) {
  static const std::set<std::string> kSubcommands = {
      "run", "resume", "validate", "best", "status", "results", "dashboard", "report", "simulate",
      "keys"};
  std::vector<std::string> args(argv + 1, argv + argc);
  bool has_subcommand = false, has_positional = false;
  for (const auto& arg : args) {
    has_subcommand = has_subcommand || kSubcommands.contains(arg);
    has_positional = has_positional || !arg.starts_with("-");
  }
  if (!has_subcommand && has_positional) args.insert(args.begin(), "run");
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  train::register_builtin_trainables();
  if (tune::is_worker()) return train::run_worker();

  // The name is given: CLI11 takes it from argv[0] only when it parses argv.
  CLI::App app{"tunerun: hyperparameter sweeps with distributed trials, results in SQLite",
               "tunerun"};
  app.set_version_flag("--version", fmt::format("tunerun {}", TUNERUN_VERSION));
  app.require_subcommand(1);
  tune::cli::setup_run(app);
  tune::cli::setup_resume(app);
  tune::cli::setup_results(app);
  tune::cli::setup_validate(app);
  tune::cli::setup_best(app);
  tune::cli::setup_status(app);
  tune::cli::setup_dashboard(app);
  tune::cli::setup_report(app);
  tune::cli::setup_simulate(app);
  tune::cli::setup_keys(app);

  return tune::cli::exit_code_of([&] {
    try {
      auto args = with_default_subcommand(argc, argv);
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      const int code = app.exit(e);  // prints the help or the error
      throw tune::cli::ExitRequest{code == 0 ? 0 : tune::cli::kExitBadInput};
    }
  });
}
