// One controller per experiment: an exclusive flock on <experiment dir>/.lock,
// which holds the holder's pid. The kernel releases it when the holder dies,
// SIGKILL included, so a crashed controller never blocks `tunerun resume`.
// Readers (sqlite3, `tunerun status`) never take it.
#pragma once

#include <filesystem>

namespace tune {

class ExperimentLock {
 public:
  // Takes the lock or throws tune::Error naming the holder's pid.
  explicit ExperimentLock(const std::filesystem::path& experiment_dir);
  ExperimentLock(const ExperimentLock&) = delete;
  ExperimentLock& operator=(const ExperimentLock&) = delete;
  ~ExperimentLock();

 private:
  int fd_ = -1;
};

}  // namespace tune
