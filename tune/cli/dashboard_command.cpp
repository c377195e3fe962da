// `tunerun dashboard DIR`: a live, read-only web view of every experiment
// under DIR (or of DIR itself), served until Ctrl-C by tunerun-dashboard
// (dashboard/main.cpp). The token reaches that program in its environment,
// never on its command line, which every user can read through /proc.

#include <fmt/format.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/errors.h"
#include "tune/cli/commands.h"
#include "tune/cli/dashboard_program.h"

namespace tune::cli {
namespace {

struct DashboardOptions {
  std::string dir;
  std::string host = "127.0.0.1";
  int port = 8265;
  std::string token;       // empty: none on loopback, a fresh one on any other address
  std::string token_file;  // a file whose first line is the token
};

// The first line of `path`, which only its owner may read: a token in a
// file others can read is no secret.
std::string read_token_file(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    throw ConfigError::at_key("--token-file", fmt::format("cannot read {}", path));
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    throw ConfigError::at_key(
        "--token-file",
        fmt::format("{} can be read by other users (mode {:04o}); `chmod 600 {}` first", path,
                    st.st_mode & 07777, path));
  }
  std::ifstream in(path);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) {
    throw ConfigError::at_key("--token-file",
                              fmt::format("{} holds no token on its first line", path));
  }
  return token;
}

// The token to serve with: the one given on the command line (--token-file,
// or --token, with a warning: a command line is readable by every user),
// else TUNERUN_DASHBOARD_TOKEN's. Both flags at once are bad input.
std::string chosen_token(const DashboardOptions& options) {
  if (!options.token_file.empty() && !options.token.empty()) {
    throw ConfigError::at_key("--token", "give --token or --token-file, not both");
  }
  if (!options.token_file.empty()) return read_token_file(options.token_file);
  if (!options.token.empty()) {
    fmt::print(stderr,
               "warning: --token is readable by every user of this machine (ps, /proc); "
               "set {} or use --token-file instead\n",
               kDashboardTokenVariable);
    return options.token;
  }
  const char* env = std::getenv(kDashboardTokenVariable);
  return env != nullptr ? env : "";
}

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
      "Token every request must carry (default: none on 127.0.0.1, a random one otherwise); "
      "other users can read a command line: prefer TUNERUN_DASHBOARD_TOKEN or --token-file");
  cmd->add_option("--token-file", options->token_file,
                  "A file (mode 0600) whose first line is the token");
  cmd->callback([options] {
    const std::string token = chosen_token(*options);
    if (token.empty()) {
      unsetenv(kDashboardTokenVariable);
    } else {
      setenv(kDashboardTokenVariable, token.c_str(), 1);
    }
    exec_dashboard_program("dashboard",
                           {options->dir, options->host, std::to_string(options->port)});
  });
}

}  // namespace tune::cli
