// GPUs for trials: which devices this machine lends, and which trial holds
// which while it runs.
//
// The devices are CUDA_VISIBLE_DEVICES' entries when the controller has that
// variable (so a controller confined to some GPUs lends only those), else
// one per /dev/nvidiaN. A rank that asks for GPUs gets its own whole devices
// as CUDA_VISIBLE_DEVICES (so it sees them as cuda:0...); ranks that ask for
// none get an empty CUDA_VISIBLE_DEVICES, as Ray does, so they cannot take
// memory on a GPU another trial holds.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tune {

// The GPU ids this process may hand out, in order.
std::vector<std::string> visible_gpus();

class GpuPool {
 public:
  explicit GpuPool(std::vector<std::string> ids) : ids_(std::move(ids)), busy_(ids_.size()) {}

  size_t size() const { return ids_.size(); }
  size_t num_free() const;
  // `n` free devices, now held, or nullopt (nothing held) when fewer are free.
  std::optional<std::vector<std::string>> take(size_t n);
  void give_back(const std::vector<std::string>& ids);

 private:
  std::vector<std::string> ids_;
  std::vector<bool> busy_;
};

}  // namespace tune
