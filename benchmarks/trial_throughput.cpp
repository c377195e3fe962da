// Controller throughput: trials/s for trainables that return at once (each
// trial's ranks fresh processes, then with reuse_workers), and results/s for
// trainables that report as fast as they can, each with the durable SQLite
// store. Anchors measured in the same run: Optuna with SQLite
// (benchmarks/anchors/optuna_baseline.py overhead, Debian's python3-optuna), when
// installed; Ray Tune's published 4,800 results/s on one node is printed
// beside results/s (Ray does not install here).
//
//   build/benchmarks/trial_throughput [num_trials=200] [num_results=20000]

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "benchmarks/anchor.h"
#include "tune/execution/controller.h"

namespace {

constexpr double kRayResultsPerSecond = 4800;  // Ray Tune release test, one node

tune::ExperimentSpec spec_for(const std::string& name, const std::filesystem::path& storage,
                              int64_t trials, int64_t iterations) {
  tune::ExperimentSpec spec;
  spec.name = name;
  spec.storage_path = storage;
  spec.metric = "value";
  spec.mode = tune::Mode::kMax;
  spec.num_samples = trials;
  spec.trainable.name = "noop";
  spec.param_space.set("iterations", iterations);
  spec.param_space.set("x", tune::uniform(0, 1));
  return spec;
}

tune::ExperimentSummary run(const tune::ExperimentSpec& spec) {
  tune::TrialController controller(spec, {.worker_argv = {TUNERUN_BINARY}, .verbosity = 0});
  return controller.run();
}

// Optuna's trials/s with SQLite and the random sampler, or 0 when Optuna is
// not installed.
double optuna_sqlite_trials_per_s() {
  const std::string cmd = bench::anchor_command("optuna_baseline.py", "overhead 2>/dev/null");
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return 0;
  char line[1024];
  while (fgets(line, sizeof line, pipe.get()) != nullptr) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("storage", "") == "sqlite" && j.value("sampler", "") == "random") {
      return j.value("trials_per_s", 0.0);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t num_trials = argc > 1 ? std::stoll(argv[1]) : 200;
  const int64_t num_results = argc > 2 ? std::stoll(argv[2]) : 20000;
  const auto storage = std::filesystem::temp_directory_path() / "tunerun_bench";
  std::filesystem::remove_all(storage);

  auto trials = run(spec_for("trials", storage, num_trials, 1));
  const double trials_per_s = trials.num_trials / trials.wall_s;
  auto reuse_spec = spec_for("reused", storage, num_trials, 1);
  reuse_spec.reuse_workers = true;
  auto reused = run(reuse_spec);
  const double reused_per_s = reused.num_trials / reused.wall_s;
  auto results = run(spec_for("results", storage, 2, num_results / 2));
  const double results_per_s = results.num_results / results.wall_s;

  fmt::print("trials:  {} one-report trials in {:.2f} s = {:.1f} trials/s ({:.2f} ms/trial)\n",
             trials.num_trials, trials.wall_s, trials_per_s, 1e3 / trials_per_s);
  fmt::print(
      "reused:  {} one-report trials in {:.2f} s = {:.1f} trials/s ({:.2f} ms/trial) with "
      "reuse_workers\n",
      reused.num_trials, reused.wall_s, reused_per_s, 1e3 / reused_per_s);
  fmt::print(
      "results: {} results from 2 trials in {:.2f} s = {:.0f} results/s; "
      "x{:.2f} Ray Tune's published {:.0f}/s\n",
      results.num_results, results.wall_s, results_per_s, results_per_s / kRayResultsPerSecond,
      kRayResultsPerSecond);
  if (auto missing = bench::missing_anchor("optuna", "python3-optuna"); !missing.empty()) {
    fmt::print("{}; no ratio\n", missing);
  } else if (double optuna = optuna_sqlite_trials_per_s(); optuna > 0) {
    fmt::print(
        "anchor:  Optuna+SQLite (random sampler, in-process objective) {:.1f} trials/s "
        "here; tunerun x{:.2f}, with reuse_workers x{:.2f}\n",
        optuna, trials_per_s / optuna, reused_per_s / optuna);
  } else {
    fmt::print("anchor:  the Optuna baseline printed no trials/s — no ratio\n");
  }
  std::filesystem::remove_all(storage);
  return 0;
}
