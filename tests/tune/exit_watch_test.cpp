// ExitWatch over eventfds standing in for exit descriptors: which trials
// it names, and that one poll of its descriptor stands for all of them.
#include "tune/launch/exit_watch.h"

#include <doctest/doctest.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace tune;

namespace {

// An eventfd, readable once written to.
struct Event {
  int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ~Event() { close(fd); }
  void fire() const {
    const uint64_t one = 1;
    CHECK(write(fd, &one, sizeof one) == sizeof one);
  }
};

bool readable(int fd) {
  pollfd item{fd, POLLIN, 0};
  return poll(&item, 1, 0) == 1;
}

}  // namespace

TEST_CASE("the watch names each trial with a readable descriptor once, in id order") {
  ExitWatch watch;
  Event a0, a1, b, c;
  watch.watch("b", {b.fd});
  watch.watch("a", {a0.fd, a1.fd});
  watch.watch("c", {c.fd});
  CHECK_FALSE(readable(watch.fd()));
  CHECK(watch.ready().empty());
  c.fire();
  a1.fire();
  a0.fire();
  CHECK(readable(watch.fd()));
  CHECK(watch.ready() == std::vector<std::string>{"a", "c"});
  // Level-triggered: still named until what made it readable is gone.
  CHECK(watch.ready() == std::vector<std::string>{"a", "c"});
}

TEST_CASE("a descriptor no longer listed, or a trial forgotten, is named no more") {
  ExitWatch watch;
  Event a0, a1, b;
  watch.watch("a", {a0.fd, a1.fd});
  watch.watch("b", {b.fd});
  a0.fire();
  b.fire();
  watch.watch("a", {a1.fd});  // rank 0 reaped: its descriptor leaves
  watch.forget("b");
  CHECK(watch.ready().empty());
  CHECK_FALSE(readable(watch.fd()));
  a1.fire();
  CHECK(watch.ready() == std::vector<std::string>{"a"});
  // Listing the same descriptors again changes nothing.
  watch.watch("a", {a1.fd});
  CHECK(watch.ready() == std::vector<std::string>{"a"});
}
