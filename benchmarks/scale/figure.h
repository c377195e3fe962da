// benchmarks/scale: what each section measures and prints, one Figure a
// line, the measured value beside its goal.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace scale {

struct Options {
  bool quick = false;         // small sizes: seconds, for the CTest case that keeps it working
  std::filesystem::path dir;  // scratch: the databases written (removed at the end)
  bool keep = false;          // leave `dir` for a look with sqlite3 or `tunerun dashboard`
  int sim_trials = 0;         // trials at once in the sim section; 0: 1,000 (40 with quick)
};

struct Figure {
  std::string what;      // e.g. "store: results/s, 1,000 trials per turn"
  std::string measured;  // the value with its unit
  std::string goal;      // e.g. ">= 20,000"; empty: for information
  std::optional<bool> met;
};

// Seconds since `start` on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// 1234567.8 -> "1,234,568".
inline std::string thousands(double value) {
  std::string digits =
      std::to_string(static_cast<long long>(value < 0 ? -value + 0.5 : value + 0.5));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return value < 0 ? "-" + digits : digits;
}

// The experiment that store_figures writes and dashboard_figures reads.
struct WrittenExperiment {
  std::filesystem::path runs;  // the folder `tunerun dashboard` would be given
  std::string name;
  int64_t trials = 0;
  int64_t results = 0;
};

// benchmarks/scale/store.cpp: sustained results through ExperimentStore at
// 1,000 concurrent trials, and a large experiment written trial after trial
// (its cost per trial, first tenth against last).
std::vector<Figure> store_figures(const Options& options, WrittenExperiment& written);

// benchmarks/scale/dashboard.cpp: every page and JSON answer of the dashboard
// on that experiment, uncached.
std::vector<Figure> dashboard_figures(const Options& options, const WrittenExperiment& written);

// benchmarks/scale/sim.cpp: the real controller driving 1,000 trials x 4
// simulated ranks at once: decision latency, RSS, a tenth of the nodes lost.
std::vector<Figure> sim_figures(const Options& options);

// benchmarks/scale/progress.cpp: the progress table's frame at 1,000 running trials.
std::vector<Figure> progress_figures(const Options& options);

// benchmarks/scale/peers.cpp: the controller's per-peer bookkeeping at
// 1,000 trials x 4 ranks: each message's and each group end's cost.
std::vector<Figure> peer_figures(const Options& options);

}  // namespace scale
