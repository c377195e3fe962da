// RunLog: what a running experiment tells its user: log lines (stamped with
// the time since the start) at a verbosity, and the live progress table
// when a ProgressReporter is set (tune/progress.h).
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tune/execution/trial_table.h"
#include "tune/progress.h"

namespace tune {

class RunLog {
 public:
  // `verbosity` 0: silent; 1: trial starts and ends; 2: every result.
  RunLog(int verbosity, std::shared_ptr<ProgressReporter> progress)
      : verbosity_(verbosity), progress_(verbosity > 0 ? std::move(progress) : nullptr) {}

  void start() { started_ = std::chrono::steady_clock::now(); }
  double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }

  // Whether lines of `level` are printed: lets a caller skip building them.
  bool enabled(int level) const { return level <= verbosity_; }

  template <class... Args>
  void log(int level, fmt::format_string<Args...> format, Args&&... args) {
    if (level > verbosity_) return;
    write(fmt::format("[{:8.2f}s] {}", elapsed_s(),
                      fmt::format(format, std::forward<Args>(args)...)));
  }

  // The progress table: when it wants its next frame, and the frames.
  std::chrono::steady_clock::time_point next_due(
      std::chrono::steady_clock::time_point latest) const;
  bool frame_due() const {
    return progress_ && std::chrono::steady_clock::now() >= progress_->next_due();
  }
  void update(const ProgressSnapshot& snapshot);
  void finish(const ProgressSnapshot& snapshot);

 private:
  void write(const std::string& line);

  int verbosity_;
  std::shared_ptr<ProgressReporter> progress_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace tune
