// benchmarks/scale: the progress table's frame with 1,000 trials running:
// the snapshot the controller takes of its trial table and the table it
// renders, as TerminalProgress draws them every half second.
#include <fmt/format.h>

#include <chrono>

#include "benchmarks/scale/figure.h"
#include "search/domain.h"
#include "storage/experiment_store.h"
#include "tune/execution/progress_rows.h"

namespace scale {
namespace {

constexpr double kFrameGoalMs = 10;  // a frame every 0.5 s: at most 2% of the loop

}  // namespace

std::vector<Figure> progress_figures(const Options& options) {
  const int running = 1000;
  tune::ExperimentSpec spec;
  spec.name = "progress";
  spec.metric = "loss";
  spec.mode = tune::Mode::kMin;
  spec.param_space = tune::ParamSpace{{"lr", tune::loguniform(1e-4, 1e-1)},
                                      {"momentum", tune::uniform(0.5, 0.99)},
                                      {"layers", tune::randint(1, 5)}};
  auto store = tune::storage::ExperimentStore::open(options.dir / "progress");
  tune::TrialTable trials(store);
  for (int i = 0; i < running; ++i) {
    tune::Trial& t =
        trials.create(fmt::format("progress_{:05d}", i), i,
                      {{"lr", 1e-4 * (1 + i)}, {"momentum", 0.9}, {"layers", 1 + i % 4}},
                      options.dir / "progress" / "trials", 1.7e9);
    trials.transition(t, tune::TrialPhase::kRunning, "started (attempt 0)", 1.7e9);
    t.iteration = 1 + i % 50;
    t.last_result = {{"loss", 1.0 / (1 + i)},
                     {"accuracy", 1 - 1.0 / (1 + i)},
                     {"training_iteration", t.iteration},
                     {"time_total_s", 0.5 * static_cast<double>(t.iteration)}};
  }
  store.flush();
  tune::ProgressRows rows(spec);
  const tune::TableStyle style{.width = 120, .max_rows = 20, .color = true};
  const int frames = options.quick ? 20 : 200;
  size_t lines = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < frames; ++i) {
    lines = tune::render_progress_table(rows.snapshot(trials, 60.0 + i), style).size();
  }
  const double ms = seconds_since(start) * 1e3 / frames;
  return {
      {fmt::format("progress table: ms a frame, {} trials running", thousands(running)),
       fmt::format("{:.2f} ms", ms), fmt::format("< {:.0f} ms", kFrameGoalMs), ms < kFrameGoalMs},
      {fmt::format("progress table: lines a frame, {} trials running (max_rows {})",
                   thousands(running), style.max_rows),
       std::to_string(lines), fmt::format("<= {}", style.max_rows + 4),
       lines <= static_cast<size_t>(style.max_rows + 4)}};
}

}  // namespace scale
