#include "train/torch/device.h"

#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <cstdlib>
#include <string>

#include "core/errors.h"

namespace train {
namespace {

bool given_a_gpu() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return visible != nullptr && *visible != '\0' && *visible != '-';
}

}  // namespace

c10::Device get_device() {
  if (!given_a_gpu()) return c10::Device(c10::kCPU);
  if (!torch::cuda::is_available()) {
    throw tune::ConfigError::at_key(
        "use_gpu", "this rank was given a GPU (CUDA_VISIBLE_DEVICES=" +
                       std::string(std::getenv("CUDA_VISIBLE_DEVICES")) +
                       ") but libtorch sees no CUDA device: a CPU-only libtorch, or no driver");
  }
  return c10::Device(c10::kCUDA, 0);
}

Backend default_backend() { return get_device().is_cuda() ? Backend::kNccl : Backend::kGloo; }

void use_rank_threads() {
  const char* env = std::getenv("OMP_NUM_THREADS");
  const int threads = env != nullptr ? std::atoi(env) : 0;
  at::set_num_threads(threads > 0 ? threads : 1);
}

}  // namespace train
