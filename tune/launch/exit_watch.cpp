#include "tune/launch/exit_watch.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/errors.h"

namespace tune {

ExitWatch::ExitWatch() : epoll_(epoll_create1(EPOLL_CLOEXEC)) {
  if (epoll_ < 0) throw Error(fmt::format("epoll_create1 failed: {}", strerror(errno)));
}

ExitWatch::~ExitWatch() { close(epoll_); }

void ExitWatch::watch(const std::string& trial_id, const std::vector<int>& fds) {
  auto listed = [&](int fd) { return std::find(fds.begin(), fds.end(), fd) != fds.end(); };
  std::vector<int>& watched = fds_[trial_id];
  std::erase_if(watched, [&](int fd) {
    if (listed(fd)) return false;
    epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);  // still open: its group closes it later
    trial_of_.erase(fd);
    return true;
  });
  for (int fd : fds) {
    if (std::find(watched.begin(), watched.end(), fd) != watched.end()) continue;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event) != 0) {
      throw Error(fmt::format("cannot watch the exits of trial {} (descriptor {}): {}", trial_id,
                              fd, strerror(errno)));
    }
    watched.push_back(fd);
    trial_of_[fd] = trial_id;
  }
  if (watched.empty()) fds_.erase(trial_id);
}

std::vector<std::string> ExitWatch::ready() {
  std::vector<std::string> trials;
  if (trial_of_.empty()) return trials;
  // Room for every descriptor: one call returns all that are ready.
  events_.resize(trial_of_.size());
  int n = -1;
  while ((n = epoll_wait(epoll_, events_.data(), static_cast<int>(events_.size()), 0)) < 0 &&
         errno == EINTR) {
  }
  for (int i = 0; i < n; ++i) {
    if (auto it = trial_of_.find(events_[i].data.fd); it != trial_of_.end()) {
      trials.push_back(it->second);
    }
  }
  std::sort(trials.begin(), trials.end());
  trials.erase(std::unique(trials.begin(), trials.end()), trials.end());
  return trials;
}

}  // namespace tune
