#include "tune/execution/resource_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "core/errors.h"

namespace tune {
namespace {

// `n` GPU ids: the first n this machine lends, then made-up ones ("2", "3"...)
// when [resources] gpus declares more than it finds (as Ray's num_gpus does).
std::vector<std::string> first_gpus(int n) {
  std::vector<std::string> ids = visible_gpus();
  ids.resize(std::min(ids.size(), static_cast<size_t>(n)));
  while (ids.size() < static_cast<size_t>(n)) ids.push_back(std::to_string(ids.size()));
  return ids;
}

}  // namespace

ResourcePool::ResourcePool(const ResourceLimits& limits, const Resources& per_trial)
    : per_trial_(per_trial),
      max_concurrent_(limits.max_concurrent_trials),
      total_cpus_(limits.total_cpus > 0 ? limits.total_cpus
                                        : static_cast<double>(std::thread::hardware_concurrency())),
      cpus_per_trial_(per_trial.smallest().cpus_per_trial()),
      gpus_(limits.total_gpus >= 0 ? first_gpus(limits.total_gpus) : visible_gpus()) {
  const size_t gpus = static_cast<size_t>(per_trial.smallest().gpus_per_trial());
  if (gpus > gpus_.size()) {
    throw ConfigError::at_key(
        "trainable.gpus_per_worker",
        fmt::format("a trial needs {} GPUs ({} workers x {}), but only {} exist{}", gpus,
                    per_trial.fewest_workers(), per_trial.gpus_per_worker, gpus_.size(),
                    gpus_.size() == 0 && limits.total_gpus < 0 ? " (no /dev/nvidia* device)" : ""));
  }
  if (cpus_per_trial_ > total_cpus_) {
    throw ConfigError::at_key(
        "trainable.num_workers",
        fmt::format("a trial needs {} CPUs ({} workers x {}), but only {} exist", cpus_per_trial_,
                    per_trial.fewest_workers(), per_trial.cpus_per_worker, total_cpus_));
  }
}

std::string ResourcePool::blocked_reason() const {
  if (max_concurrent_ > 0 && running_ >= max_concurrent_) {
    return fmt::format("waiting: max_concurrent_trials={} reached", max_concurrent_);
  }
  const double free = total_cpus_ - cpus_used_;
  if (free + 1e-9 < cpus_per_trial_) {
    return fmt::format("waiting for resources: needs {} CPUs, {} of {} free", cpus_per_trial_, free,
                       total_cpus_);
  }
  const size_t gpus = static_cast<size_t>(per_trial_.smallest().gpus_per_trial());
  if (gpus_.num_free() < gpus) {
    return fmt::format("waiting for resources: needs {} GPUs, {} of {} free", gpus,
                       gpus_.num_free(), gpus_.size());
  }
  return {};
}

int ResourcePool::ranks_free() const {
  const double free = total_cpus_ - cpus_used_ + 1e-9;
  int ranks = static_cast<int>(free / per_trial_.cpus_per_worker);
  if (per_trial_.gpus_per_worker > 0) {
    ranks = std::min(ranks, static_cast<int>(gpus_.num_free()) / per_trial_.gpus_per_worker);
  }
  return std::clamp(ranks, 0, per_trial_.num_workers);
}

std::vector<std::vector<std::string>> ResourcePool::acquire(int ranks) {
  ++running_;
  if (ranks <= 0) ranks = per_trial_.num_workers;
  cpus_used_ += ranks * per_trial_.cpus_per_worker;
  std::vector<std::vector<std::string>> gpus(static_cast<size_t>(ranks));
  if (gpus_.size() == 0) return gpus;
  // Ranks without GPUs get none visible; blocked_reason() made sure enough are free.
  for (auto& ids : gpus) {
    ids = gpus_.take(static_cast<size_t>(per_trial_.gpus_per_worker)).value_or(ids);
  }
  return gpus;
}

void ResourcePool::release(const std::vector<std::vector<std::string>>& gpus) {
  --running_;
  cpus_used_ -= static_cast<double>(gpus.size()) * per_trial_.cpus_per_worker;
  if (running_ == 0) cpus_used_ = 0;  // no rounding left over
  for (const auto& ids : gpus) gpus_.give_back(ids);
}

}  // namespace tune
