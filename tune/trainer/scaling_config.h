// ScalingConfig: how many ranks a training job runs and what each gets, as
// Ray Train's ScalingConfig.
#pragma once

#include "tune/resources.h"

namespace train {

// A number of ranks, or for an elastic group the range {min, max} (as
// Ray's num_workers=(min, max)): the job runs with as many as fit, at least
// min, and changes size only at a checkpoint (README, "Elastic groups").
struct WorkerCount {
  WorkerCount(int n) : min(n), max(n) {}  // NOLINT(google-explicit-constructor): a plain count
  WorkerCount(int min_workers, int max_workers) : min(min_workers), max(max_workers) {}
  int min;
  int max;
};

struct ScalingConfig {
  WorkerCount num_workers = 1;  // ranks (processes) per training job, or {min, max}
  bool use_gpu = false;         // each rank gets resources_per_worker.gpus GPUs (1 unless set)
  struct Resources {
    double cpus = 1;  // Ray's default {CPU: 1}
    int gpus = 0;     // whole GPUs; with use_gpu, 0 means 1
  } resources_per_worker;
  // How the ranks map onto nodes (Ray's placement_strategy); PACK: as few as fit.
  tune::PlacementStrategy placement_strategy = tune::PlacementStrategy::kPack;
  // Intra-op threads of each rank (OMP_NUM_THREADS); 0: resources_per_worker.cpus,
  // so 2 ranks of 1 CPU on 2 cores do not oversubscribe them.
  int threads_per_worker = 0;

  int gpus_per_worker() const {
    return use_gpu && resources_per_worker.gpus == 0 ? 1 : resources_per_worker.gpus;
  }
  // The ranks' resources as the one struct every path validates.
  tune::Resources resources() const {
    return {num_workers.max,    resources_per_worker.cpus,
            gpus_per_worker(),  threads_per_worker,
            placement_strategy, num_workers.min != num_workers.max ? num_workers.min : 0};
  }
  // Throws tune::ConfigError naming the field that is out of range: the
  // rules of tune/spec/validation.h, plus GPUs only with use_gpu.
  void validate() const;
};

}  // namespace train
