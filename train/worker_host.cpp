// tunerun-worker: the process the CLI starts for each rank of a built-in,
// plug-in or command trainable. It holds the worker runtime and the
// built-in trainables only, not the CLI's sweep parser or the dashboard's
// HTTP server with its TLS libraries, so a rank starts by loading about
// two thirds of the shared libraries `tunerun` loads.
#include <fmt/format.h>

#include "train/builtins/builtins.h"
#include "train/worker_env.h"
#include "train/worker_runtime.h"

int main() {
  if (!tune::is_worker()) {
    fmt::print(stderr,
               "tunerun-worker runs the ranks of trials for a tunerun controller, which starts "
               "it; run sweeps with `tunerun SWEEP.toml`\n");
    return 2;
  }
  train::register_builtin_trainables();
  return train::run_worker();
}
