// tunerun-dashboard: the program behind `tunerun dashboard` and `tunerun
// report` (dashboard_program.h says why it is one of its own). tunerun has
// parsed and checked the user's options; it runs this as
//   tunerun-dashboard dashboard DIR HOST PORT TOKEN   (TOKEN may be empty)
//   tunerun-dashboard report EXPERIMENT_DIR OUTPUT
// Exit codes are tunerun's (tune/cli/commands.h).

#include <fmt/format.h>
#include <poll.h>

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "dashboard/report.h"
#include "dashboard/server.h"
#include "tune/cli/commands.h"
#include "tune/cli/dashboard_program.h"
#include "tune/system/signal_pipe.h"

namespace tune::cli {
namespace {

struct DashboardOptions {
  std::string dir;
  std::string host;
  int port = 0;
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

void report(const std::string& experiment_dir, const std::string& output) {
  size_t trials = 0;
  try {
    trials = dashboard::write_report(experiment_dir, output);
  } catch (const Error& e) {  // an unreadable experiment or an unwritable output
    fmt::print(stderr, "error: {}\n", e.what());
    throw ExitRequest{kExitBadInput};
  }
  fmt::print("wrote {} ({} trials); open it in a browser, no server needed\n", output, trials);
}

int parse_port(const std::string& text) {
  int port = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (error != std::errc{} || end != text.data() + text.size() || port < 0 || port > 65535) {
    throw ConfigError(fmt::format("port '{}' is not a number from 0 to 65535", text));
  }
  return port;
}

void run(const std::vector<std::string>& args) {
  if (args.size() == 4 && args[0] == "dashboard") {
    // The token comes in the environment (only this user can read it), never in argv.
    const char* token = std::getenv(kDashboardTokenVariable);
    serve({.dir = args[1],
           .host = args[2],
           .port = parse_port(args[3]),
           .token = token != nullptr ? token : ""});
  } else if (args.size() == 3 && args[0] == "report") {
    report(args[1], args[2]);
  } else {
    throw ConfigError(
        "tunerun-dashboard runs `tunerun dashboard` and `tunerun report`: "
        "use those (tunerun dashboard --help, tunerun report --help)");
  }
}

}  // namespace
}  // namespace tune::cli

int main(int argc, char** argv) {
  return tune::cli::exit_code_of(
      [&] { tune::cli::run(std::vector<std::string>(argv + 1, argv + argc)); });
}
