// ExitWatch: the exit descriptors of every running group (pidfds, a
// simulated group's eventfd: LaunchedGroup::exit_fds) in one epoll set, so
// that the event loop polls one descriptor however many ranks run, and
// learns which groups have news without asking each of them every turn.
// A group's descriptors are registered when it starts and whenever its
// exits were reaped (a reaped rank's pidfd stays readable: it leaves the
// set), and leave the set with the group, before they are closed.
//
// Owned by WorkerGroups, on the controller's event loop; not thread-safe.
#pragma once

#include <sys/epoll.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace tune {

class ExitWatch {
 public:
  // Throws Error when the kernel gives no epoll instance (descriptors exhausted).
  ExitWatch();
  ~ExitWatch();
  ExitWatch(const ExitWatch&) = delete;
  ExitWatch& operator=(const ExitWatch&) = delete;

  // Readable while a watched descriptor is.
  int fd() const { return epoll_; }

  // Watches exactly `fds` for `trial_id` from now on: descriptors it no
  // longer lists leave the set, new ones join. Throws Error when the
  // kernel refuses one.
  void watch(const std::string& trial_id, const std::vector<int>& fds);
  // Stops watching the trial's descriptors (call before they are closed).
  void forget(const std::string& trial_id) { watch(trial_id, {}); }

  // The trials with a descriptor readable now, each once, in id order.
  std::vector<std::string> ready();

 private:
  int epoll_;
  std::unordered_map<std::string, std::vector<int>> fds_;  // by trial id
  std::unordered_map<int, std::string> trial_of_;          // by descriptor
  std::vector<epoll_event> events_;                        // ready()'s buffer
};

}  // namespace tune
