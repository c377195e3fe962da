// ResourcePool: what trials may hold at once (CPUs, GPUs, the concurrency
// limit) and why the next trial waits when it must.
//
// Every trial of an experiment needs the same resources per rank (its
// trainable's Resources); an elastic trial (Resources::min_workers) holds
// those of the ranks it runs with now. Owned by the controller's event loop;
// not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tune/spec/experiment.h"
#include "tune/system/gpus.h"

namespace tune {

struct ResourceLimits {
  double total_cpus = 0;          // 0: this machine's cores
  int total_gpus = -1;            // -1: the GPUs this machine lends (tune/system/gpus.h)
  int max_concurrent_trials = 0;  // 0: no limit
};

class ResourcePool {
 public:
  // Throws ConfigError when one trial needs more than the whole pool.
  ResourcePool(const ResourceLimits& limits, const Resources& per_trial);

  // Why no further trial can start now (with its fewest ranks); empty when one can.
  std::string blocked_reason() const;
  // The most ranks of one more trial that fit now, at most num_workers.
  int ranks_free() const;

  // Takes the share of one trial of `ranks` ranks (0: num_workers); returns
  // the GPU ids of each rank (empty lists without GPUs). Call only when
  // blocked_reason() is empty, with at most ranks_free() ranks.
  std::vector<std::vector<std::string>> acquire(int ranks = 0);
  // Gives back a share acquire() returned (one entry per rank).
  void release(const std::vector<std::vector<std::string>>& gpus);

  int running() const { return running_; }
  bool has_gpus() const { return gpus_.size() > 0; }
  double total_cpus() const { return total_cpus_; }

 private:
  Resources per_trial_;
  int max_concurrent_;
  double total_cpus_;
  double cpus_per_trial_;  // with its fewest ranks
  GpuPool gpus_;
  int running_ = 0;
  double cpus_used_ = 0;
};

}  // namespace tune
