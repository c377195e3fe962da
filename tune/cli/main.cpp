// tunerun: run hyperparameter sweeps described in TOML.
//
// The same executable is also every worker: started by a controller with
// TUNERUN_WORKER=1, it runs the worker runtime and never parses arguments.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "core/errors.h"
#include "train/builtins/builtins.h"
#include "train/worker_env.h"
#include "train/worker_runtime.h"
#include "tune/cli/commands.h"

namespace {

// `tunerun [options] sweep.toml` means `tunerun run [options] sweep.toml`:
// "run" is implied when the first argument that is neither an option nor an
// option's value names no subcommand. An option's value may be any word
// (`tunerun q.toml --name status`): `run`'s options say which take one.
std::vector<std::string> with_default_subcommand(const CLI::App& app, int argc, char** argv) {
  const CLI::App* run = app.get_subcommand("run");
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (!arg.starts_with("-")) {
      bool named = false;
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        named = named || sub->check_name(arg);
      }
      if (!named) args.insert(args.begin(), "run");
      break;
    }
    if (arg.find('=') != std::string::npos) continue;  // --name=value
    const CLI::Option* option = run->get_option_no_throw(arg);
    if (option != nullptr && option->get_items_expected_max() > 0) ++i;  // its value follows
  }
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
      auto args = with_default_subcommand(app, argc, argv);
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      const int code = app.exit(e);  // prints the help or the error
      throw tune::cli::ExitRequest{code == 0 ? 0 : tune::cli::kExitBadInput};
    }
  });
}
