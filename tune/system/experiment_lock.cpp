#include "tune/system/experiment_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/errors.h"

namespace tune {

ExperimentLock::ExperimentLock(const std::filesystem::path& experiment_dir) {
  const auto path = experiment_dir / ".lock";
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw Error(fmt::format("cannot open {}: {}", path.string(), strerror(errno)));
  }
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {};
    const ssize_t n = pread(fd_, holder, sizeof holder - 1, 0);
    close(fd_);
    fd_ = -1;
    throw Error(fmt::format("experiment {} is already run by another controller (pid {}; lock {})",
                            experiment_dir.string(),
                            n > 0 ? std::string(holder, strcspn(holder, "\n")) : "unknown",
                            path.string()));
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd_, 0) != 0 || pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // The lock holds without the pid; only the message of a rival suffers.
  }
}

ExperimentLock::~ExperimentLock() {
  if (fd_ >= 0) close(fd_);  // releases the flock
}

}  // namespace tune
