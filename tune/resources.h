// Resources: what each rank of a trial's worker group gets. The one
// description of a trial's resources: a sweep file's [trainable], the C++
// API's tune::Trainable and train::ScalingConfig all become this, and
// finish_spec (tune/spec_validation.h) checks it the same way for all.
#pragma once

#include <algorithm>

namespace tune {

struct Resources {
  int num_workers = 1;         // ranks per trial
  double cpus_per_worker = 1;  // Ray's default resources_per_worker = {CPU: 1}
  int gpus_per_worker = 0;     // whole GPUs per rank (CUDA_VISIBLE_DEVICES; tune/gpus.h)
  int threads_per_worker = 0;  // OMP_NUM_THREADS of each rank; 0: cpus_per_worker

  // Threads per rank: threads_per_worker, else the whole CPUs per worker (at least 1).
  int threads() const {
    return threads_per_worker > 0 ? threads_per_worker
                                  : std::max(1, static_cast<int>(cpus_per_worker));
  }
  double cpus_per_trial() const { return num_workers * cpus_per_worker; }
  int gpus_per_trial() const { return num_workers * gpus_per_worker; }
};

}  // namespace tune
