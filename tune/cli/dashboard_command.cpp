// `tunerun dashboard DIR`: a live, read-only web view of every experiment
// under DIR (or of DIR itself), served until Ctrl-C by tunerun-dashboard
// (dashboard_main.cpp).

#include <CLI/CLI.hpp>
#include <string>

#include "tune/cli/commands.h"
#include "tune/cli/dashboard_program.h"

namespace tune::cli {
namespace {

struct DashboardOptions {
  std::string dir;
  std::string host = "127.0.0.1";
  int port = 8265;
  std::string token;  // empty: none on loopback, a fresh one on any other address
};

}  // namespace

void setup_dashboard(CLI::App& app) {
  auto options = std::make_shared<DashboardOptions>();
  CLI::App* cmd = app.add_subcommand(
      "dashboard", "Serve a live read-only web view of the experiments under a folder");
  cmd->add_option("dir", options->dir,
                  "Folder of experiments (runs/) or one experiment (runs/NAME)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--host", options->host, "Address to bind; anything but loopback needs a token")
      ->capture_default_str();
  cmd->add_option("--port", options->port, "Port (0 picks a free one)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option(
      "--token", options->token,
      "Token every request must carry (default: none on 127.0.0.1, a random one otherwise)");
  cmd->callback([options] {
    exec_dashboard_program(
        "dashboard", {options->dir, options->host, std::to_string(options->port), options->token});
  });
}

}  // namespace tune::cli
