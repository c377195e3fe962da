// Resources: what each rank of a trial's worker group gets. The one
// description of a trial's resources: a sweep file's [trainable], the C++
// API's tune::Trainable and train::ScalingConfig all become this, and
// finish_spec (tune/spec/validation.h) checks it the same way for all.
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

namespace tune {

// How a trial's ranks map onto nodes, as Ray's placement-group strategies
// (a rank is one bundle). PACK and SPREAD are preferences; the STRICT ones
// are conditions, and a group one can never meet is refused with each
// node's state. One machine is one node.
enum class PlacementStrategy {
  kPack,          // as few nodes as fit (Ray's default)
  kSpread,        // as many nodes as fit, the ranks spread evenly over them
  kStrictPack,    // every rank on one node
  kStrictSpread,  // every rank on a node of its own
};

inline constexpr std::array<std::string_view, 4> kPlacementStrategies = {
    "PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"};

inline std::string_view to_string(PlacementStrategy strategy) {
  return kPlacementStrategies[static_cast<size_t>(strategy)];
}

inline std::optional<PlacementStrategy> placement_strategy_from_string(std::string_view name) {
  for (size_t i = 0; i < kPlacementStrategies.size(); ++i) {
    if (kPlacementStrategies[i] == name) return static_cast<PlacementStrategy>(i);
  }
  return std::nullopt;
}

struct Resources {
  int num_workers = 1;         // ranks per trial; with min_workers, the most
  double cpus_per_worker = 1;  // Ray's default resources_per_worker = {CPU: 1}
  int gpus_per_worker = 0;     // whole GPUs per rank (CUDA_VISIBLE_DEVICES; tune/system/gpus.h)
  int threads_per_worker = 0;  // OMP_NUM_THREADS of each rank; 0: cpus_per_worker
  PlacementStrategy placement_strategy = PlacementStrategy::kPack;  // the ranks over nodes
  // An elastic group: at least this many ranks, as many as fit up to
  // num_workers (tune/execution/run_start.h); 0: exactly num_workers.
  int min_workers = 0;

  // Threads per rank: threads_per_worker, else the whole CPUs per worker (at least 1).
  int threads() const {
    return threads_per_worker > 0 ? threads_per_worker
                                  : std::max(1, static_cast<int>(cpus_per_worker));
  }
  bool elastic() const { return min_workers > 0 && min_workers < num_workers; }
  // The fewest ranks a trial runs with, and its resources then.
  int fewest_workers() const { return elastic() ? min_workers : num_workers; }
  Resources smallest() const {
    Resources fewest = *this;
    fewest.num_workers = fewest_workers();
    return fewest;
  }
  double cpus_per_trial() const { return num_workers * cpus_per_worker; }
  int gpus_per_trial() const { return num_workers * gpus_per_worker; }
};

}  // namespace tune
