// A trainable library as a user would build one: it links none of tunerun's
// libraries; train::report resolves against the tunerun executable.
#include "train/session.h"
#include "train/trainable.h"

extern "C" void tunerun_register_trainables() {
  train::register_trainable("plugin_square", [](const tune::Config& config) {
    const double x = config.get<double>("x");
    train::report({{"loss", x * x}, {"rank", train::get_context().world_rank}});
  });
}
