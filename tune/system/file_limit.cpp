// The controller's open-file limit (tune/system/file_limit.h).
#include "tune/system/file_limit.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <fstream>
#include <limits>

namespace tune {
namespace {

constexpr int64_t kDescriptorsPerRank = 3;  // two connections and a pidfd
constexpr int64_t kOwnDescriptors = 256;    // the store, ZeroMQ's sockets and threads, logs

int64_t as_int(rlim_t value) {
  return value == RLIM_INFINITY ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(value);
}

// The most descriptors a process may have open at all (fs.nr_open).
rlim_t system_cap() {
  std::ifstream in("/proc/sys/fs/nr_open");
  rlim_t cap = 0;
  return in >> cap ? cap : RLIM_INFINITY;
}

}  // namespace

FileLimit current_file_limit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return {};
  return {as_int(files.rlim_cur), as_int(files.rlim_max)};
}

FileLimit raise_file_limit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != files.rlim_max) {
    rlimit raised = files;
    raised.rlim_cur = files.rlim_max == RLIM_INFINITY ? system_cap() : files.rlim_max;
    if (raised.rlim_cur > files.rlim_cur) (void)setrlimit(RLIMIT_NOFILE, &raised);
  }
  return current_file_limit();
}

int64_t descriptors_needed(int64_t ranks) { return ranks * kDescriptorsPerRank + kOwnDescriptors; }

std::optional<std::string> file_limit_warning(const FileLimit& limit, int64_t trials,
                                              int64_t ranks_per_trial) {
  const int64_t ranks = trials * ranks_per_trial;
  if (limit.soft >= descriptors_needed(ranks)) return std::nullopt;
  const int64_t fit = std::max<int64_t>(0, (limit.soft - kOwnDescriptors) / kDescriptorsPerRank /
                                               std::max<int64_t>(1, ranks_per_trial));
  return fmt::format(
      "up to {} trials x {} ranks may run at once, which needs about {} open files in the "
      "controller ({} per rank), but its limit is {} (hard limit {}): ranks past about {} trials "
      "will fail to connect. Raise the hard limit (ulimit -Hn; LimitNOFILE= in a systemd unit, "
      "nofile in /etc/security/limits.conf) or set max_concurrent_trials to at most {}",
      trials, ranks_per_trial, descriptors_needed(ranks), kDescriptorsPerRank, limit.soft,
      limit.hard, fit, fit);
}

}  // namespace tune
