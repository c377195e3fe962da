#include "train/builtins/builtins.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <numbers>
#include <thread>

#include "train/builtins/learning_curve.h"
#include "train/session.h"
#include "train/trainable.h"

namespace train {
namespace {

void quadratic(const tune::Config& config) {
  const double x = config.get<double>("x", 0.0);
  const double y = config.get<double>("y", 0.0);
  report({{"loss", (x - 3) * (x - 3) + (y + 1) * (y + 1)}});
}

void branin(const tune::Config& config) {
  using std::numbers::pi;
  const double x1 = config.get<double>("x1", 0.0);
  const double x2 = config.get<double>("x2", 0.0);
  const double b = 5.1 / (4 * pi * pi), c = 5 / pi, t = 1 / (8 * pi);
  const double value =
      std::pow(x2 - b * x1 * x1 + c * x1 - 6, 2) + 10 * (1 - t) * std::cos(x1) + 10;
  report({{"loss", value}});
}

void learning_curve(const tune::Config& config) {
  const LearningCurve curve = LearningCurve::from_config(config);
  // Injected failures strike the first attempt only, so a restart can succeed.
  const bool first_attempt = get_context().attempt == 0;
  int64_t start = 1;
  if (auto checkpoint = get_checkpoint()) start = read_curve_checkpoint(checkpoint->path()) + 1;
  for (int64_t t = start; t <= curve.iterations; ++t) {
    if (curve.sleep_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(curve.sleep_s));
    }
    if (first_attempt && t == curve.fail_at) {
      throw std::runtime_error(fmt::format("injected failure at iteration {}", t));
    }
    if (first_attempt && t == curve.crash_at) std::_Exit(3);
    if (first_attempt && t == curve.vanish_at) std::_Exit(0);  // gone without a word, exit code 0
    if (first_attempt && t == curve.hang_at) raise(SIGSTOP);   // a hung rank: alive, silent
    const tune::Json metrics = curve.metrics(t);
    // Also checkpoint where the scheduler may act (train::should_checkpoint):
    // all that pausing, resuming and cloning need.
    if (curve.checkpoints_at(t) || (curve.checkpoint_for_scheduler && should_checkpoint())) {
      auto dir = make_checkpoint_dir();
      if (get_context().world_rank == 0) write_curve_checkpoint(dir, t);
      report(metrics, Checkpoint::from_directory(dir));
    } else {
      report(metrics);
    }
  }
}

// Reports `iterations` times, as fast as it can or, with results_per_s, on
// a fixed schedule (report t is due at t / results_per_s from the start, so
// a late report does not push the later ones back).
void noop(const tune::Config& config) {
  const int64_t iterations = config.get<int64_t>("iterations", 1);
  const double results_per_s = config.get<double>("results_per_s", 0.0);
  const auto start = std::chrono::steady_clock::now();
  for (int64_t t = 1; t <= iterations; ++t) {
    if (results_per_s > 0) {
      std::this_thread::sleep_until(
          start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(static_cast<double>(t) / results_per_s)));
    }
    report({{"value", t}});
  }
}

}  // namespace

void register_builtin_trainables() {
  register_trainable("quadratic", quadratic);
  register_trainable("branin", branin);
  register_trainable("learning_curve", learning_curve);
  register_trainable("noop", noop);
}

}  // namespace train
