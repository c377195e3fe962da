// tunerun-sim: the process of the simulated peers (tune/launch/sim/peer_host.h).
// The SimLauncher starts it with its end of their socketpair as argument;
// it dies with its controller, and ends when the launcher closes the pair.
#include <fmt/format.h>
#include <sys/prctl.h>

#include <csignal>
#include <cstdlib>
#include <exception>

#include "tune/launch/process.h"
#include "tune/launch/sim/peer_host.h"
#include "tune/system/file_limit.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr,
               "tunerun-sim runs the simulated ranks of a tunerun controller (launcher = "
               "\"sim\"), which starts it; run sweeps with `tunerun SWEEP.toml`\n");
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  tune::raise_file_limit();  // two sockets per simulated rank
  try {
    tune::sim::PeerHost host(std::atoi(argv[1]));
    host.run();
    // The launcher is gone, and its ranks with it: no socket lingers to
    // send their last words to a controller that no longer listens.
    std::_Exit(0);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tunerun-sim: {}\n", e.what());
    return 1;
  }
}
