// A C++ program built on tune::Tuner as a user writes one, for the case that
// runs it inside a Slurm allocation: nothing in it names Slurm. Its launcher
// is "auto" (RunConfig::cluster), which inside the allocation means Slurm job
// steps, and each trial's two ranks must land on two nodes (STRICT_SPREAD).
//
//   tuner_program STORAGE_PATH CONTROL_ADDRESS
//
// Prints "N trials, N terminated" and exits 0 when every trial TERMINATED.
#include <fmt/format.h>

#include "train/session.h"
#include "tune/tuner.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fmt::print(stderr, "usage: tuner_program STORAGE_PATH CONTROL_ADDRESS\n");
    return 2;
  }
  tune::Trainable trainable{
      .name = "spread_ranks",
      .func =
          [](const tune::Config& config) {
            const double x = config.get<double>("x");
            for (int i = 1; i <= 3; ++i) {
              train::report({{"loss", x / i}, {"rank", train::get_context().world_rank}});
            }
          },
      .num_workers = 2,
      .placement_strategy = tune::PlacementStrategy::kStrictSpread};
  tune::Tuner tuner(trainable, {{"x", tune::grid_search({1.0, 2.0})}},
                    {.metric = "loss", .mode = tune::Mode::kMin},
                    {.name = "cpp_tuner",
                     .storage_path = argv[1],
                     .verbosity = 0,
                     .cluster = {.control_address = argv[2]}});
  const tune::ResultGrid results = tuner.fit();
  fmt::print("{} trials, {} terminated\n", results.size(), results.num_terminated());
  return results.num_terminated() == static_cast<int64_t>(results.size()) ? 0 : 1;
}
