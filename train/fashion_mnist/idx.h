// IDX files (the MNIST format): a big-endian header (magic 0x0000TTNN: type
// TT, NN dimensions; then NN uint32 sizes) and the values, row-major. The
// Fashion-MNIST files are unsigned bytes (type 0x08), gzipped.
//
// No libtorch here: the reader is cheap to compile and to test.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "core/errors.h"

namespace train::fashion_mnist {

// A file is missing, truncated or not IDX of unsigned bytes.
class DataError : public tune::Error {
 public:
  using Error::Error;
};

struct IdxArray {
  std::vector<int64_t> dims;  // e.g. {60000, 28, 28}
  std::vector<uint8_t> values;
};

// Reads an IDX file of unsigned bytes, gzipped (".gz") or not. Throws
// DataError naming the file.
IdxArray read_idx(const std::filesystem::path& path);

}  // namespace train::fashion_mnist
