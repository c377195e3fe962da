// WorkerGroups over a launcher whose groups are records, not processes, and
// a clock the tests drive: when released groups are killed, when spares may
// start, when a silent rank is reported, what the loop is told to wake for,
// which groups' exits it hears of.
#include "tune/launch/worker_groups.h"

#include <doctest/doctest.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <csignal>
#include <memory>
#include <vector>

using namespace tune;

namespace {

// What a fake group was sent, shared with the test after the group is gone.
struct Signals {
  std::vector<int> sent;
};

// Its ranks die of SIGKILL at once; its exit descriptor (an eventfd) is
// readable from then on, and listed while a rank's exit is not reaped.
class FakeGroup final : public LaunchedGroup {
 public:
  FakeGroup(int size, std::shared_ptr<Signals> signals)
      : exits_(static_cast<size_t>(size)), signals_(std::move(signals)) {}
  ~FakeGroup() override { close(exit_fd_); }
  int size() const override { return static_cast<int>(exits_.size()); }
  int64_t pid(int) const override { return 0; }
  std::vector<int> exit_fds() const override {
    if (reaped_) return {};
    return {exit_fd_};
  }
  std::vector<RankExit> reap() override {
    reaped_ = all_exited();
    return {};
  }
  const std::optional<ExitStatus>& exit_status(int rank) const override { return exits_.at(rank); }
  void signal(int signal) override {
    signals_->sent.push_back(signal);
    if (signal == SIGKILL) {
      for (auto& e : exits_) e = ExitStatus{.signal = SIGKILL, .signaled = true};
      const uint64_t one = 1;
      CHECK(write(exit_fd_, &one, sizeof one) == sizeof one);
    }
  }
  void kill_and_wait() override { signal(SIGKILL); }

 private:
  std::vector<std::optional<ExitStatus>> exits_;
  std::shared_ptr<Signals> signals_;
  int exit_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  bool reaped_ = false;
};

class FakeLauncher final : public Launcher {
 public:
  std::unique_ptr<LaunchedGroup> launch(const GroupLaunch& launch) override {
    signals.push_back(std::make_shared<Signals>());
    return std::make_unique<FakeGroup>(static_cast<int>(launch.ranks.size()), signals.back());
  }
  std::vector<std::shared_ptr<Signals>> signals;  // per group, in launch order
};

GroupLaunch one_rank(const std::string& trial_id) {
  GroupLaunch launch;
  launch.trial_id = trial_id;
  launch.ranks.resize(1);
  return launch;
}

// A clock that moves only when a test advances it.
struct TestClock {
  Clock::time_point at = Clock::time_point() + std::chrono::hours(1);
  NowFunction now() {
    return [this] { return at; };
  }
};

const auto kFar = Clock::time_point::max();

}  // namespace

TEST_CASE("a released group's idle ranks are killed kill_delay later, and the loop wakes for it") {
  FakeLauncher launcher;
  TestClock clock;
  WorkerGroups groups(launcher, {.kill_delay = std::chrono::milliseconds(50), .now = clock.now()});
  groups.start("a", 0, 0, {{}}, one_rank("a"));
  const auto released = clock.at;
  groups.release("a", false);
  REQUIRE(launcher.signals.size() == 1);
  CHECK(launcher.signals[0]->sent.empty());  // not at the release
  const auto wake = groups.next_deadline(kFar);
  CHECK(wake == released + std::chrono::milliseconds(50));
  groups.check_deadlines(wake - std::chrono::milliseconds(1));
  CHECK(launcher.signals[0]->sent.empty());
  groups.check_deadlines(wake);
  CHECK(launcher.signals[0]->sent == std::vector<int>{SIGKILL});
  CHECK(groups.next_deadline(kFar) == kFar);  // reaped: nothing left to wake for
}

TEST_CASE("a released group that holds GPUs is killed at once") {
  FakeLauncher launcher;
  WorkerGroups groups(launcher, {.kill_delay = std::chrono::milliseconds(50)});
  groups.start("a", 0, 0, {{"0"}}, one_rank("a"));
  groups.release("a", false);
  CHECK(launcher.signals[0]->sent == std::vector<int>{SIGKILL});
}

TEST_CASE(
    "a spare starts no sooner than spare_delay after a group start, and the loop wakes then") {
  FakeLauncher launcher;
  TestClock clock;
  WorkerGroups groups(
      launcher,
      {.prestart = true, .spare_delay = std::chrono::milliseconds(50), .now = clock.now()});
  CHECK_FALSE(groups.wants_spare());  // no running group to stand in for
  const auto started = clock.at;
  groups.start("a", 0, 0, {{}}, one_rank("a"));
  CHECK_FALSE(groups.wants_spare());
  CHECK(groups.next_deadline(kFar) == started + std::chrono::milliseconds(50));
  clock.at += std::chrono::milliseconds(49);
  CHECK_FALSE(groups.wants_spare());
  clock.at += std::chrono::milliseconds(1);
  CHECK(groups.wants_spare());
  groups.add_spare(1, one_rank("~spare"));
  CHECK_FALSE(groups.wants_spare());  // one spare per running group
  CHECK(groups.next_deadline(kFar) == kFar);
}

TEST_CASE(
    "a rank silent for heartbeat_timeout_s is reported; one seen meanwhile is not, nor one "
    "whose group is stopping") {
  FakeLauncher launcher;
  TestClock clock;
  WorkerGroups groups(launcher, {.heartbeat_timeout_s = 2, .now = clock.now()});
  groups.start("a", 0, 0, {{}}, one_rank("a"));
  groups.start("b", 0, 0, {{}}, one_rank("b"));
  clock.at += std::chrono::milliseconds(1500);
  groups.find("b")->ranks[0].last_seen = groups.now();  // b's heartbeat arrives
  CHECK(groups.check_deadlines(clock.at).empty());
  clock.at += std::chrono::milliseconds(500);
  const auto events = groups.check_deadlines(clock.at);
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == GroupEvent::Kind::kHeartbeatMissed);
  CHECK(events[0].trial_id == "a");
  CHECK(events[0].silent_s == doctest::Approx(2.0));
  // Once its group is told to stop, its silent rank is not reported again.
  groups.terminate("a");
  clock.at += std::chrono::milliseconds(1500);
  const auto later = groups.check_deadlines(clock.at);
  REQUIRE(later.size() == 1);
  CHECK(later[0].trial_id == "b");
}

TEST_CASE("a silent rank of a group handed to another trial is reported under that trial") {
  FakeLauncher launcher;
  TestClock clock;
  WorkerGroups groups(launcher, {.heartbeat_timeout_s = 2, .now = clock.now()});
  groups.start("a", 0, 0, {{}}, one_rank("a"));
  clock.at += std::chrono::milliseconds(1500);
  groups.hand_over("a", "b", 0, 0);  // its run of b begins now
  clock.at += std::chrono::milliseconds(1000);
  CHECK(groups.check_deadlines(clock.at).empty());
  clock.at += std::chrono::milliseconds(1000);
  const auto events = groups.check_deadlines(clock.at);
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == GroupEvent::Kind::kHeartbeatMissed);
  CHECK(events[0].trial_id == "b");
  CHECK(events[0].silent_s == doctest::Approx(2.0));
}

TEST_CASE("the loop hears of running groups' exits through one descriptor, until they are reaped") {
  FakeLauncher launcher;
  WorkerGroups groups(launcher, {});
  auto readable = [&] {
    pollfd item{groups.exit_fd(), POLLIN, 0};
    return poll(&item, 1, 0) == 1;
  };
  for (const char* id : {"c", "b", "a"}) groups.start(id, 0, 0, {{}}, one_rank(id));
  CHECK_FALSE(readable());
  groups.kill("c");
  groups.kill("a");
  CHECK(readable());
  CHECK(groups.exited() == std::vector<std::string>{"a", "c"});
  groups.reap("a");
  CHECK(groups.exited() == std::vector<std::string>{"c"});
  groups.release("c", false);  // its exit is not the loop's business any more
  CHECK(groups.exited().empty());
  CHECK_FALSE(readable());
}

namespace {

// Marks the rank of running trial `id` DONE (and suspended, as a pause that
// keeps it in report()), and releases its group kept.
void release_kept(WorkerGroups& groups, const std::string& id, bool suspended) {
  Rank& rank = groups.find(id)->ranks[0];
  rank.done = true;
  rank.suspended = suspended;
  groups.release(id, true);
}

// Starts trial `id` on a fake one-rank group and releases it kept.
void pause_kept(WorkerGroups& groups, const std::string& id, bool suspended) {
  groups.start(id, 0, 0, {{}}, one_rank(id));
  release_kept(groups, id, suspended);
}

}  // namespace

TEST_CASE(
    "suspended groups are kept for their trials apart from max_idle, up to max_suspended_ranks") {
  FakeLauncher launcher;
  WorkerGroups groups(launcher, {.keep_paused = true,
                                 .max_idle = 2,
                                 .max_suspended_ranks = 5,
                                 .available_memory = [] { return 1.0; }});
  // A population pausing in turn: all five stay, though max_idle is 2.
  for (int i = 0; i < 5; ++i) pause_kept(groups, "t" + std::to_string(i), true);
  for (int i = 0; i < 5; ++i) CHECK(groups.holds_suspended("t" + std::to_string(i)));
  // A sixth lets the oldest go.
  pause_kept(groups, "t5", true);
  CHECK_FALSE(groups.holds_suspended("t0"));
  CHECK(groups.holds_suspended("t1"));
  CHECK(groups.holds_suspended("t5"));
  // Each trial resumes on its own ranks.
  CHECK(groups.start("t3", 0, 0, {{}}, one_rank("t3")) == GroupSource::kSuspended);
  CHECK(groups.start("t0", 0, 0, {{}}, one_rank("t0")) == GroupSource::kLaunched);
}

TEST_CASE("with little memory available, the oldest suspended group goes at each pause") {
  FakeLauncher launcher;
  double available = 1.0;
  WorkerGroups groups(launcher,
                      {.keep_paused = true, .available_memory = [&] { return available; }});
  pause_kept(groups, "a", true);
  pause_kept(groups, "b", true);
  available = 0.1;  // below min_available_memory (0.25)
  pause_kept(groups, "c", true);
  CHECK_FALSE(groups.holds_suspended("a"));
  CHECK(groups.holds_suspended("b"));
  CHECK(groups.holds_suspended("c"));
}

TEST_CASE("idle groups that are not suspended stay within max_idle, the suspended ones aside") {
  FakeLauncher launcher;
  WorkerGroups groups(launcher,
                      {.reuse = true, .max_idle = 2, .available_memory = [] { return 1.0; }});
  // Five trials run at once; one pauses in place, four end.
  for (const char* id : {"s", "r0", "r1", "r2", "r3"}) groups.start(id, 0, 0, {{}}, one_rank(id));
  release_kept(groups, "s", true);
  for (const char* id : {"r0", "r1", "r2", "r3"}) release_kept(groups, id, false);
  // Two open groups left (the newest), the suspended one still there: the
  // first three starts take them (own first, then the newest open), the
  // fourth launches.
  CHECK(groups.holds_suspended("s"));
  CHECK(groups.start("s", 0, 0, {{}}, one_rank("s")) == GroupSource::kSuspended);
  CHECK(groups.start("x", 0, 0, {{}}, one_rank("x")) == GroupSource::kKept);
  CHECK(groups.start("y", 0, 0, {{}}, one_rank("y")) == GroupSource::kKept);
  CHECK(groups.start("z", 0, 0, {{}}, one_rank("z")) == GroupSource::kLaunched);
}

TEST_CASE("launches wait while max_connecting_ranks launched ranks have not all connected") {
  FakeLauncher launcher;
  WorkerGroups groups(launcher, {.max_connecting_ranks = 2});
  groups.start("a", 0, 0, {{}}, one_rank("a"));
  CHECK_FALSE(groups.connecting_full());
  groups.start("b", 0, 0, {{}}, one_rank("b"));
  CHECK(groups.connecting_full());
  groups.connected("a");  // every rank of a said HELLO
  CHECK_FALSE(groups.connecting_full());
  groups.start("c", 0, 0, {{}}, one_rank("c"));
  CHECK(groups.connecting_full());
  groups.release("b", false);  // ended before its ranks connected
  CHECK_FALSE(groups.connecting_full());
}

TEST_CASE("with max_connecting_ranks 0 any number of ranks may be connecting") {
  FakeLauncher launcher;
  WorkerGroups groups(launcher, {.max_connecting_ranks = 0});
  for (const char* id : {"a", "b", "c"}) groups.start(id, 0, 0, {{}}, one_rank(id));
  CHECK_FALSE(groups.connecting_full());
}
