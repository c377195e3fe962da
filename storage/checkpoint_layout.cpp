#include "storage/checkpoint_layout.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
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

// A copy of `from` at `to` sharing its bytes where the filesystem allows: a
// reflink (copy-on-write: btrfs, XFS), else a hard link (a published
// checkpoint is never written again), else a byte copy (another device).
void share_file(const fs::path& from, const fs::path& to) {
  const int in = open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in >= 0) {
    const int out = open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    const bool cloned = out >= 0 && ioctl(out, FICLONE, in) == 0;
    if (out >= 0) close(out);
    close(in);
    if (cloned) return;
    if (out >= 0) fs::remove(to);
  }
  std::error_code ec;
  fs::create_hard_link(from, to, ec);
  if (!ec) return;
  fs::copy_file(from, to);
}

void share_tree(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const auto& entry : fs::recursive_directory_iterator(from)) {
    const fs::path target = to / fs::relative(entry.path(), from);
    if (entry.is_symlink()) {
      fs::copy_symlink(entry.path(), target);
    } else if (entry.is_directory()) {
      fs::create_directories(target);
    } else {
      share_file(entry.path(), target);
    }
  }
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
  static std::atomic<uint64_t> next_own{0};  // rank threads of one process share the pid
  char host[256] = {};
  gethostname(host, sizeof host - 1);  // ranks on other nodes write into this staging too
  try {
    if (!fs::is_directory(source)) {
      throw Error(fmt::format("checkpoint {} is not a directory", source.string()));
    }
    fs::create_directories(staging);
    for (const auto& entry : fs::directory_iterator(source)) {
      const fs::path target = staging / entry.path().filename();
      // Moved (from another filesystem: copied) under a name no other rank
      // uses, synced there, then put in place: another rank may replace an
      // entry of the same name at any time.
      const fs::path own = staging / fmt::format(".own_{}_{}_{}", host, getpid(), next_own++);
      std::error_code ec;
      fs::rename(entry.path(), own, ec);
      if (ec == std::errc::cross_device_link) {
        fs::copy(entry.path(), own, fs::copy_options::recursive);
        fs::remove_all(entry.path());
      } else if (ec) {
        throw fs::filesystem_error("stage checkpoint", entry.path(), own, ec);
      }
      if (fs::is_directory(own)) {
        fsync_tree(own);
      } else {
        fsync_path(own);
      }
      if (fs::exists(target)) fs::remove_all(target);
      fs::rename(own, target);
    }
    fs::remove_all(source);
    fsync_path(staging);
  } catch (const fs::filesystem_error& e) {
    throw Error(fmt::format("cannot stage checkpoint {}: {}", source.string(), e.what()));
  }
}

void publish_checkpoint(const fs::path& staging, const fs::path& published) {
  try {
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
    share_tree(source, staging);
    fsync_tree(staging);
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
