// A C++ sweep with the Tuner API: TPE proposes (lr, width), ASHA stops the
// trials whose learning curves lag, and the best config is printed.
//
//   ./build/examples/tune_quadratic [STORAGE_PATH]      (default: runs)
//
// The program runs again as each trial's worker (same binary, same
// arguments): fit() runs train_func there and exits, so everything before
// fit() must be the same in every process, and only the driver gets past it.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "train/session.h"
#include "tune/tuner.h"

namespace {

// A learning curve: the loss falls from 1 + floor towards `floor`, faster
// for larger lr, and the floor is lowest at width 0.3, lr 1e-2.
void train_func(const tune::Config& config) {
  const double lr = config.get<double>("lr");
  const double width = config.get<double>("width");
  const double floor = (width - 0.3) * (width - 0.3) + 0.05 * std::pow(std::log10(lr) + 2, 2);
  const double rate = 3 * std::sqrt(lr);
  for (int epoch = 1; epoch <= 20; ++epoch) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // "training"
    train::report({{"loss", floor + std::exp(-rate * epoch)}, {"epoch", epoch}});
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string storage = argc > 1 ? argv[1] : "runs";
  tune::ParamSpace space{{"lr", tune::loguniform(1e-4, 1e-1)}, {"width", tune::uniform(0, 1)}};
  tune::TuneConfig cfg{.metric = "loss",
                       .mode = tune::Mode::kMin,
                       .search_alg = tune::search::tpe({.base = {.seed = 7}}),
                       .num_samples = 24,
                       .scheduler = tune::schedulers::asha({.max_t = 20, .grace_period = 2}),
                       .max_concurrent_trials = 4};
  tune::RunConfig run{.storage_path = storage,
                      .stop = std::map<std::string, double>{{"training_iteration", 20}}};
  tune::ResultGrid results = tune::Tuner("quadratic", train_func, space, cfg, run).fit();

  // Only the driver gets here.
  const tune::Result& best = results.get_best_result();
  fmt::print("{} trials ({} errors) in {}\n", results.size(), results.num_errors(),
             results.experiment_path().string());
  fmt::print("best: {} loss={:.4f} after {} iterations\n", best.config.dump(),
             best.metrics["loss"].get<double>(), best.metrics["training_iteration"].get<int>());
  results.to_csv(results.experiment_path() / "results.csv");
  return results.num_errors() == 0 ? 0 : 1;
}
