// Tuner: the C++ entry point, as Ray Tune's tune.Tuner.
//
//   void train_func(const tune::Config& config) { ... train::report({{"loss", l}}); ... }
//
//   int main(int argc, char** argv) {
//     tune::ParamSpace space{{"lr", tune::loguniform(1e-4, 1e-1)}};
//     tune::Tuner tuner({.name = "quadratic", .func = train_func}, space,
//                       {.metric = "loss", .mode = tune::Mode::kMin, .num_samples = 8});
//     tune::ResultGrid results = tuner.fit();  // workers never return from here
//     fmt::print("{}\n", results.get_best_result().config.dump());
//   }
//
// Same-binary workers (docs/design.md, the process model): fit() starts this very
// program again, with the same arguments, once per rank of each trial; in
// those processes tune::is_worker() is true and fit() runs the trainable as a
// worker, then exits the process with the worker's exit code. So:
//
//   THE ONE RULE: everything the trainable needs (data, globals, parsed
//   arguments, registrations) must be set up before fit(), identically in
//   every process; and whatever only the driver should do (printing a banner,
//   deleting or writing files, network calls) must not run before fit()
//   unless guarded by `if (!tune::is_worker())`. Code after fit() runs in the
//   driver only.
//
// Not thread-safe; fit() once per object (a second call fails: the
// experiment's directory exists; use restore() to continue one).
#pragma once

#include <filesystem>
#include <string>

#include "search/param_space.h"
#include "train/trainable.h"
#include "train/worker_env.h"
#include "tune/resources.h"
#include "tune/result_grid.h"
#include "tune/tune_config.h"

namespace tune {

// What a trial runs: a function called once per rank with the trial's
// config, and the resources of its worker group. The name registers the
// function (train::register_trainable) and names the default experiment.
struct Trainable {
  std::string name = "train_func";
  train::TrainFunc func;
  int num_workers = 1;         // ranks per trial
  double cpus_per_worker = 1;  // Ray's default resources_per_worker = {CPU: 1}
  int gpus_per_worker = 0;     // whole GPUs per rank, given as its CUDA_VISIBLE_DEVICES
  int threads_per_worker = 0;  // OMP_NUM_THREADS of each rank; 0: cpus_per_worker
  PlacementStrategy placement_strategy = PlacementStrategy::kPack;  // the ranks over nodes
  // An elastic group (tune/resources.h): at least this many ranks, up to
  // num_workers; 0: exactly num_workers.
  int min_workers = 0;

  // The fields above as the one Resources struct that every path validates.
  Resources resources() const {
    return {num_workers,        cpus_per_worker,    gpus_per_worker,
            threads_per_worker, placement_strategy, min_workers};
  }
};
using FunctionTrainable = Trainable;

// How restore() treats trials that ended in ERROR (Ray's Tuner.restore options).
struct RestoreOptions {
  bool resume_errored = false;   // retry them from their latest checkpoint
  bool restart_errored = false;  // retry them from scratch
};

class Tuner {
 public:
  // Throws ConfigError for a trainable without a function or name.
  Tuner(Trainable trainable, ParamSpace param_space, TuneConfig tune_config = {},
        RunConfig run_config = {});
  Tuner(std::string name, train::TrainFunc func, ParamSpace param_space,
        TuneConfig tune_config = {}, RunConfig run_config = {});

  // Runs the experiment and returns its results. In a worker process it runs
  // the trainable and exits instead. Throws ConfigError for a config that
  // cannot run (before anything is written), StorageError when the store
  // fails; trial failures are not exceptions: see ResultGrid::errors().
  ResultGrid fit();

  // The results of this Tuner's experiment so far (after fit, or of a
  // restored experiment before fit). Throws StorageError when none exists.
  ResultGrid get_results() const;

  // Continues the experiment in `path` (<storage_path>/<name>): finished
  // trials stay finished, running and paused ones restart from their latest
  // checkpoint. Ray re-requires the trainable; here the param space too, and
  // the TuneConfig when it used a search_alg or scheduler object (their
  // state is restored into objects of the same kind and options). An empty
  // tune_config.metric takes the stored experiment's metric and mode. The
  // name and storage path come from `path`.
  static Tuner restore(const std::filesystem::path& path, Trainable trainable,
                       ParamSpace param_space, TuneConfig tune_config = {},
                       RunConfig run_config = {}, RestoreOptions options = {});
  // True when `path` holds an experiment restore() can continue.
  static bool can_restore(const std::filesystem::path& path);

 private:
  Trainable trainable_;
  ParamSpace param_space_;
  TuneConfig tune_config_;
  RunConfig run_config_;
  bool resume_ = false;
  RestoreOptions restore_options_;
};

}  // namespace tune
