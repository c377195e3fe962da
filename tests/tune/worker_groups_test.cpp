// WorkerGroups over a launcher whose groups are records, not processes:
// when released groups are killed, when spares may start, what the loop
// is told to wake for.
#include "tune/worker_groups.h"

#include <doctest/doctest.h>

#include <csignal>
#include <memory>
#include <thread>
#include <vector>

using namespace tune;

namespace {

// What a fake group was sent, shared with the test after the group is gone.
struct Signals {
  std::vector<int> sent;
};

class FakeGroup final : public LaunchedGroup {
 public:
  FakeGroup(int size, std::shared_ptr<Signals> signals)
      : exits_(static_cast<size_t>(size)), signals_(std::move(signals)) {}
  int size() const override { return static_cast<int>(exits_.size()); }
  int64_t pid(int) const override { return 0; }
  std::vector<int> exit_fds() const override { return {}; }
  std::vector<RankExit> reap() override { return {}; }
  const std::optional<ExitStatus>& exit_status(int rank) const override { return exits_.at(rank); }
  void signal(int signal) override {
    signals_->sent.push_back(signal);
    if (signal == SIGKILL) {
      for (auto& e : exits_) e = ExitStatus{.signal = SIGKILL, .signaled = true};
    }
  }
  void kill_and_wait() override { signal(SIGKILL); }

 private:
  std::vector<std::optional<ExitStatus>> exits_;
  std::shared_ptr<Signals> signals_;
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

const auto kFar = Clock::now() + std::chrono::hours(1);

}  // namespace

TEST_CASE("a released group's idle ranks are killed kill_delay later, and the loop wakes for it") {
  FakeLauncher launcher;
  WorkerGroups groups(launcher, {.kill_delay = std::chrono::milliseconds(50)});
  groups.start("a", 0, 0, {{}}, one_rank("a"));
  const auto released = Clock::now();
  groups.release("a", false);
  REQUIRE(launcher.signals.size() == 1);
  CHECK(launcher.signals[0]->sent.empty());  // not at the release
  const auto wake = groups.next_deadline(kFar);
  CHECK(wake >= released + std::chrono::milliseconds(50));
  CHECK(wake < released + std::chrono::milliseconds(100));
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
  WorkerGroups groups(launcher, {.prestart = true, .spare_delay = std::chrono::milliseconds(50)});
  CHECK_FALSE(groups.wants_spare());  // no running group to stand in for
  const auto started = Clock::now();
  groups.start("a", 0, 0, {{}}, one_rank("a"));
  if (Clock::now() < started + std::chrono::milliseconds(50)) {
    CHECK_FALSE(groups.wants_spare());
    const auto wake = groups.next_deadline(kFar);
    CHECK(wake >= started + std::chrono::milliseconds(50));
    CHECK(wake < kFar);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  CHECK(groups.wants_spare());
  groups.add_spare(1, one_rank("~spare"));
  CHECK_FALSE(groups.wants_spare());  // one spare per running group
  CHECK(groups.next_deadline(kFar) == kFar);
}
