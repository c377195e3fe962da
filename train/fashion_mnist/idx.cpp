#include "train/fashion_mnist/idx.h"

#include <zlib.h>

#include <memory>

namespace train::fashion_mnist {

namespace {

constexpr uint8_t kTypeUnsignedByte = 0x08;

// gzread reads plain files too, so one path serves both.
struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

void read_exactly(gzFile file, void* out, size_t size, const std::filesystem::path& path) {
  auto* bytes = static_cast<uint8_t*>(out);
  while (size > 0) {
    unsigned chunk = static_cast<unsigned>(std::min<size_t>(size, 1u << 30));
    int got = gzread(file, bytes, chunk);
    if (got <= 0) {
      int code = 0;
      const char* message = gzerror(file, &code);
      throw DataError(path.string() + ": truncated IDX file" +
                      (code != Z_OK ? std::string(" (") + message + ")" : std::string()));
    }
    bytes += got;
    size -= static_cast<size_t>(got);
  }
}

uint32_t big_endian(const uint8_t* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

}  // namespace

IdxArray read_idx(const std::filesystem::path& path) {
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (!file) throw DataError(path.string() + ": cannot open");
  gzbuffer(file.get(), 1 << 20);
  uint8_t magic[4];
  read_exactly(file.get(), magic, 4, path);
  if (magic[0] != 0 || magic[1] != 0 || magic[2] != kTypeUnsignedByte || magic[3] == 0) {
    throw DataError(path.string() + ": not an IDX file of unsigned bytes");
  }
  IdxArray array;
  size_t count = 1;
  for (int d = 0; d < magic[3]; ++d) {
    uint8_t size[4];
    read_exactly(file.get(), size, 4, path);
    array.dims.push_back(big_endian(size));
    count *= array.dims.back();
  }
  array.values.resize(count);
  read_exactly(file.get(), array.values.data(), count, path);
  return array;
}

}  // namespace train::fashion_mnist
