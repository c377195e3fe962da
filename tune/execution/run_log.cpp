#include "tune/execution/run_log.h"

#include <cstdio>

namespace tune {

std::chrono::steady_clock::time_point RunLog::next_due(
    std::chrono::steady_clock::time_point latest) const {
  return progress_ ? std::min(latest, progress_->next_due()) : latest;
}

void RunLog::update(const ProgressSnapshot& snapshot) {
  if (progress_) progress_->update(snapshot);
}

void RunLog::finish(const ProgressSnapshot& snapshot) {
  if (progress_) progress_->finish(snapshot);
}

void RunLog::write(const std::string& line) {
  if (progress_) {
    progress_->line(line);
  } else {
    fmt::print(stderr, "{}\n", line);
  }
}

}  // namespace tune
