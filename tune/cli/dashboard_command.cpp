// `tunerun dashboard DIR`: a live, read-only web view of every experiment
// under DIR (or of DIR itself), served until Ctrl-C.

#include <fmt/format.h>
#include <poll.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <thread>

#include "core/errors.h"
#include "dashboard/server.h"
#include "tune/cli/commands.h"
#include "tune/signal_pipe.h"

namespace tune::cli {
namespace {

struct DashboardOptions {
  std::string dir;
  std::string host = "127.0.0.1";
  int port = 8265;
  std::string token;  // empty: none on loopback, a fresh one on any other address
};

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

void serve(DashboardOptions options) {
  if (options.token.empty() && !is_loopback(options.host)) {
    options.token = dashboard::DashboardServer::make_token();
  }
  dashboard::Api api({.root = options.dir});
  dashboard::DashboardServer server(
      api, {.host = options.host, .port = options.port, .token = options.token});
  int port = 0;
  try {
    port = server.bind();
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    throw ExitRequest{kExitInternal};
  }
  const auto names = api.experiment_names();
  const std::string shown_host = options.host == "0.0.0.0" ? "127.0.0.1" : options.host;
  const std::string url =
      fmt::format("http://{}:{}/{}",
                  shown_host.find(':') != std::string::npos ? "[" + shown_host + "]" : shown_host,
                  port, options.token.empty() ? "" : "?token=" + options.token);
  fmt::print("tunerun dashboard: {} experiment{} under {} (read-only)\n", names.size(),
             names.size() == 1 ? "" : "s", options.dir);
  fmt::print("  serving {}\n", url);
  if (!options.token.empty()) fmt::print("  the token is needed from any other machine too\n");
  fmt::print("  Ctrl-C stops it\n");
  std::fflush(stdout);

  SignalPipe signals;
  std::atomic<bool> done = false;
  std::thread watcher([&] {
    pollfd fd{signals.fd(), POLLIN, 0};
    while (!done) {
      if (poll(&fd, 1, 200) > 0 && signals.take() > 0) server.stop();
    }
  });
  server.serve();
  done = true;
  watcher.join();
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
      "Token every request must carry (default: none on 127.0.0.1, a random one otherwise)");
  cmd->callback([options] { serve(*options); });
}

}  // namespace tune::cli
