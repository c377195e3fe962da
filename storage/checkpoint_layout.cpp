#include "storage/checkpoint_layout.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/errors.h"

namespace tune::storage {
namespace fs = std::filesystem;
namespace {

void fsync_path(const fs::path& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(fmt::format("cannot open {}: {}", path.string(), strerror(errno)));
  const int rc = fsync(fd);
  const int err = errno;
  close(fd);
  if (rc != 0) throw Error(fmt::format("fsync {}: {}", path.string(), strerror(err)));
}

void fsync_tree(const fs::path& root) {
  for (const auto& entry : fs::recursive_directory_iterator(root)) fsync_path(entry.path());
  fsync_path(root);
}

}  // namespace

fs::path scratch_dir(const fs::path& trial_dir, int rank, int64_t n) {
  return trial_dir / ".scratch" / fmt::format("rank{}_{}", rank, n);
}

fs::path staging_dir(const fs::path& trial_dir, int64_t iteration) {
  return trial_dir / ".staging" / fmt::format("checkpoint_{:06d}", iteration);
}

fs::path checkpoint_dir(const fs::path& trial_dir, int64_t iteration) {
  return trial_dir / fmt::format("checkpoint_{:06d}", iteration);
}

void stage_checkpoint(const fs::path& source, const fs::path& staging) {
  try {
    if (!fs::is_directory(source)) {
      throw Error(fmt::format("checkpoint {} is not a directory", source.string()));
    }
    fs::create_directories(staging);
    for (const auto& entry : fs::directory_iterator(source)) {
      const fs::path target = staging / entry.path().filename();
      if (fs::exists(target)) fs::remove_all(target);
      std::error_code ec;
      fs::rename(entry.path(), target, ec);
      if (ec == std::errc::cross_device_link) {
        fs::copy(entry.path(), target, fs::copy_options::recursive);
        fs::remove_all(entry.path());
      } else if (ec) {
        throw fs::filesystem_error("stage checkpoint", entry.path(), target, ec);
      }
    }
    fs::remove_all(source);
  } catch (const fs::filesystem_error& e) {
    throw Error(fmt::format("cannot stage checkpoint {}: {}", source.string(), e.what()));
  }
}

void publish_checkpoint(const fs::path& staging, const fs::path& published) {
  try {
    fsync_tree(staging);
    if (fs::exists(published)) fs::remove_all(published);
    fs::rename(staging, published);
    fsync_path(published.parent_path());
  } catch (const fs::filesystem_error& e) {
    throw Error(fmt::format("cannot publish checkpoint {}: {}", published.string(), e.what()));
  }
}

void clone_checkpoint(const fs::path& source, const fs::path& published) {
  const fs::path staging = published.parent_path() / ".staging" / published.filename();
  try {
    if (fs::exists(staging)) fs::remove_all(staging);
    fs::create_directories(staging.parent_path());
    fs::copy(source, staging, fs::copy_options::recursive);
  } catch (const fs::filesystem_error& e) {
    throw Error(fmt::format("cannot clone checkpoint {}: {}", source.string(), e.what()));
  }
  publish_checkpoint(staging, published);
}

void clear_unpublished(const fs::path& trial_dir) {
  std::error_code ec;  // a missing directory is already clear
  fs::remove_all(trial_dir / ".staging", ec);
  fs::remove_all(trial_dir / ".scratch", ec);
  if (ec) {
    throw Error(fmt::format("cannot clear {}/.staging: {}", trial_dir.string(), ec.message()));
  }
}

}  // namespace tune::storage
