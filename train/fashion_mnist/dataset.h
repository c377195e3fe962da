// Fashion-MNIST as tensors, from Debian's dataset-fashion-mnist.
#pragma once

#include <cstdint>
#include <filesystem>

#include "train/torch/data.h"

namespace train::fashion_mnist {

// Debian's dataset-fashion-mnist. The environment variable
// TUNERUN_FASHION_MNIST_DIR overrides it.
inline constexpr const char* kDefaultDataDir = "/usr/share/datasets/fashion-mnist";

enum class Split { kTrain, kTest };  // 60,000 and 10,000 samples

// The directory to read: `dir` if not empty, else TUNERUN_FASHION_MNIST_DIR,
// else kDefaultDataDir.
std::filesystem::path data_dir(const std::filesystem::path& dir = {});

// True when the four gzipped IDX files are in `dir`.
bool available(const std::filesystem::path& dir);

// Images as float [N, 1, 28, 28] normalised with the training set's mean and
// standard deviation (0.2860, 0.3530), labels as int64 [N]. `limit` > 0
// keeps the first `limit` samples. Cached per process: a worker reused for
// the next trial does not read the files again. Throws DataError.
TensorDataset load(Split split, const std::filesystem::path& dir, int64_t limit = 0);

}  // namespace train::fashion_mnist
