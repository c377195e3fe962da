#include "train/fashion_mnist/dataset.h"

#include <ATen/ATen.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

#include "train/fashion_mnist/idx.h"

namespace train::fashion_mnist {

namespace {

constexpr float kMean = 0.2860f;
constexpr float kStd = 0.3530f;

std::string prefix(Split split) { return split == Split::kTrain ? "train" : "t10k"; }

TensorDataset read(Split split, const std::filesystem::path& dir) {
  IdxArray images = read_idx(dir / (prefix(split) + "-images-idx3-ubyte.gz"));
  IdxArray labels = read_idx(dir / (prefix(split) + "-labels-idx1-ubyte.gz"));
  if (images.dims.size() != 3 || labels.dims.size() != 1 || images.dims[0] != labels.dims[0]) {
    throw DataError(dir.string() + ": " + prefix(split) + " images and labels do not match");
  }
  auto n = images.dims[0];
  at::Tensor x =
      at::from_blob(images.values.data(), {n, 1, images.dims[1], images.dims[2]}, at::kByte)
          .to(at::kFloat)
          .div_(255.0f)
          .sub_(kMean)
          .div_(kStd);
  at::Tensor y = at::from_blob(labels.values.data(), {n}, at::kByte).to(at::kLong);
  return {x, y};
}

}  // namespace

std::filesystem::path data_dir(const std::filesystem::path& dir) {
  if (!dir.empty()) return dir;
  const char* env = std::getenv("TUNERUN_FASHION_MNIST_DIR");
  return env != nullptr && *env != '\0' ? std::filesystem::path(env)
                                        : std::filesystem::path(kDefaultDataDir);
}

bool available(const std::filesystem::path& dir) {
  for (const char* name : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                           "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"}) {
    if (!std::filesystem::exists(dir / name)) return false;
  }
  return true;
}

TensorDataset load(Split split, const std::filesystem::path& dir, int64_t limit) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, Split>, TensorDataset> cache;
  TensorDataset data;
  {
    std::lock_guard lock(mutex);
    auto key = std::make_tuple(dir.string(), split);
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, read(split, dir)).first;
    data = it->second;
  }
  if (limit > 0 && limit < data.size()) {
    data = {data.data.narrow(0, 0, limit), data.target.narrow(0, 0, limit)};
  }
  return data;
}

}  // namespace train::fashion_mnist
