// Scheduler efficiency: the training iterations each scheduler spends on the
// same 64 synthetic learning curves, and the best final accuracy it finds,
// beside FIFO (every trial runs all 81 iterations) measured in the same run.
// Each trial is the built-in learning_curve trainable (accuracy = ceiling *
// (1 - exp(-speed * t))) with ceiling and speed sampled from a fixed seed, so
// every scheduler sees the same 64 configs; all run through the real
// controller and worker processes.
//
//   iterations  completed training iterations (results), over all trials
//   best        the best trial's last accuracy (the experiment's best_trial)
//
// Goal: ASHA reaches FIFO's best within 1% while spending at most a third
// of FIFO's iterations.
//
//   build/benchmarks/scheduler_efficiency [concurrent_trials=2]

#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tune/execution/controller.h"

namespace {

constexpr int64_t kTrials = 64;
constexpr int64_t kMaxT = 81;  // HyperBand's default max_t; every curve's length
constexpr uint64_t kSeed = 2024;

struct Run {
  std::string name;
  std::string scheduler;
  tune::Json options;
  // Pausing schedulers need checkpoints where they may pause or clone a
  // trial (train::should_checkpoint); the others run without.
  bool checkpoints;
};

struct Outcome {
  int64_t iterations = 0;
  double best = 0;
  double wall_s = 0;
};

Outcome run(const Run& r, const std::filesystem::path& storage, int concurrent) {
  tune::ExperimentSpec spec;
  spec.name = r.name;
  spec.storage_path = storage;
  spec.metric = "accuracy";
  spec.mode = tune::Mode::kMax;
  spec.num_samples = kTrials;
  spec.seed = kSeed;
  spec.total_cpus = concurrent;
  spec.scheduler = r.scheduler;
  spec.scheduler_options = r.options;
  spec.trainable.name = "learning_curve";
  spec.param_space.set("ceiling", tune::uniform(0.6, 0.95));
  spec.param_space.set("speed", tune::loguniform(0.02, 0.3));
  spec.param_space.set("iterations", kMaxT);
  spec.param_space.set("checkpoint_for_scheduler", r.checkpoints);
  tune::TrialController controller(spec, {.worker_argv = {TUNERUN_BINARY}, .verbosity = 0});
  const tune::ExperimentSummary summary = controller.run();
  if (summary.num_errors > 0) {
    fmt::print(stderr, "{}: {} trials failed\n", r.name, summary.num_errors);
  }
  return {summary.num_results, summary.best ? summary.best->value : 0, summary.wall_s};
}

}  // namespace

int main(int argc, char** argv) {
  const int concurrent = argc > 1 ? std::stoi(argv[1]) : 2;
  const auto storage = std::filesystem::temp_directory_path() / "tunerun_bench_schedulers";
  std::filesystem::remove_all(storage);

  const std::vector<Run> runs = {
      {"fifo", "fifo", tune::Json::object(), false},
      {"asha", "asha", {{"max_t", kMaxT}, {"grace_period", 1}, {"reduction_factor", 3}}, false},
      {"hyperband", "hyperband", {{"max_t", kMaxT}, {"reduction_factor", 3}}, true},
      {"pbt",
       "pbt",
       {{"time_attr", "training_iteration"},
        {"perturbation_interval", 9},
        {"hyperparam_mutations", {{"speed", {{"loguniform", {0.02, 0.3}}}}}},
        {"seed", kSeed}},
       true},
  };
  fmt::print(
      "{} learning curves of {} iterations (ceiling ~ U(0.6, 0.95), speed ~ "
      "logU(0.02, 0.3), seed {}), {} trials at a time\n",
      kTrials, kMaxT, kSeed, concurrent);
  fmt::print("{:<10} {:>10} {:>9} {:>8}   {:>12} {:>9} {:>8}\n", "scheduler", "iterations", "best",
             "wall s", "iterations/", "best/", "wall/");
  fmt::print("{:<10} {:>10} {:>9} {:>8}   {:>12} {:>9} {:>8}\n", "", "", "", "", "FIFO's", "FIFO's",
             "FIFO's");
  std::vector<Outcome> outcomes;
  for (const Run& r : runs) {
    outcomes.push_back(run(r, storage, concurrent));
    const Outcome& o = outcomes.back();
    const Outcome& fifo = outcomes.front();
    fmt::print("{:<10} {:>10} {:>9.5f} {:>8.2f}   {:>12.3f} {:>9.4f} {:>8.2f}\n", r.name,
               o.iterations, o.best, o.wall_s, double(o.iterations) / double(fifo.iterations),
               o.best / fifo.best, o.wall_s / fifo.wall_s);
    std::fflush(stdout);
  }
  const Outcome& fifo = outcomes[0];
  const Outcome& asha = outcomes[1];
  const bool best_ok = asha.best >= 0.99 * fifo.best;
  const bool cost_ok = 3 * asha.iterations <= fifo.iterations;
  fmt::print(
      "goal: ASHA's best within 1% of FIFO's ({:.4f} >= 0.99) with at most 1/3 of its "
      "iterations ({:.3f} <= 0.333): {}\n",
      asha.best / fifo.best, double(asha.iterations) / double(fifo.iterations),
      best_ok && cost_ok ? "met" : "NOT met");
  std::filesystem::remove_all(storage);
  return 0;
}
