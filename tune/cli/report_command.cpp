// `tunerun report runs/NAME -o report.html`: the dashboard's views of one
// experiment, data included, as one self-contained HTML file, written by
// tunerun-dashboard (dashboard_main.cpp).

#include <CLI/CLI.hpp>
#include <string>

#include "tune/cli/commands.h"
#include "tune/cli/dashboard_program.h"

namespace tune::cli {
namespace {

struct ReportOptions {
  std::string experiment_dir;
  std::string output = "report.html";
};

}  // namespace

void setup_report(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Write an experiment's dashboard as one self-contained HTML file");
  cmd->add_option("experiment", options->experiment_dir, "Experiment directory (runs/NAME)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("-o,--output", options->output, "The HTML file to write")->capture_default_str();
  cmd->callback([options] {
    exec_dashboard_program("report", {options->experiment_dir, options->output});
  });
}

}  // namespace tune::cli
