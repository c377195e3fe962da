// `tunerun report runs/NAME -o report.html`: the dashboard's views of one
// experiment, data included, as one self-contained HTML file.

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "core/errors.h"
#include "dashboard/report.h"
#include "tune/cli/commands.h"

namespace tune::cli {
namespace {

struct ReportOptions {
  std::string experiment_dir;
  std::string output = "report.html";
};

void report(const ReportOptions& options) {
  size_t trials = 0;
  try {
    trials = dashboard::write_report(options.experiment_dir, options.output);
  } catch (const Error& e) {  // an unreadable experiment or an unwritable output
    fmt::print(stderr, "error: {}\n", e.what());
    throw ExitRequest{kExitBadInput};
  }
  fmt::print("wrote {} ({} trials); open it in a browser, no server needed\n", options.output,
             trials);
}

}  // namespace

void setup_report(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Write an experiment's dashboard as one self-contained HTML file");
  cmd->add_option("experiment", options->experiment_dir, "Experiment directory (runs/NAME)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("-o,--output", options->output, "The HTML file to write")->capture_default_str();
  cmd->callback([options] { report(*options); });
}

}  // namespace tune::cli
