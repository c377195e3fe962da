// WindDown: an interrupt begins once and its grace expires once; stop_all
// takes the first stopper's reason and asks none once it began.
#include "tune/execution/wind_down.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace tune;

namespace {

// A stopper whose stop_all() answers `all`, counting the questions.
class AskedStopper final : public Stopper {
 public:
  AskedStopper(bool all, std::string why) : all_(all), why_(std::move(why)) {}
  bool should_stop_trial(const std::string&, const Json&) override { return false; }
  bool stop_all() override {
    ++asked;
    return all_;
  }
  std::string reason() const override { return why_; }
  int asked = 0;

 private:
  bool all_;
  std::string why_;
};

const Clock::time_point kStart = Clock::time_point() + std::chrono::hours(1);

}  // namespace

TEST_CASE("an interrupt begins once, and its grace expires once") {
  WindDown wind_down;
  CHECK_FALSE(wind_down.winding_down());
  CHECK(wind_down.interrupt("interrupted", kStart + std::chrono::seconds(30)));
  CHECK_FALSE(wind_down.interrupt("fail_fast: trial t failed", kStart));  // the first stands
  CHECK(wind_down.interrupted());
  CHECK(wind_down.winding_down());
  CHECK(wind_down.interrupt_reason() == "interrupted");
  CHECK_FALSE(wind_down.grace_expired(kStart + std::chrono::seconds(29)));
  CHECK(wind_down.grace_expired(kStart + std::chrono::seconds(30)));
  CHECK_FALSE(wind_down.grace_expired(kStart + std::chrono::seconds(31)));  // killed once
}

TEST_CASE("stop_all takes the first stopper that says so, and asks none once it began") {
  auto no = std::make_shared<AskedStopper>(false, "never");
  auto budget = std::make_shared<AskedStopper>(true, "time budget of 10 s reached");
  auto plateau = std::make_shared<AskedStopper>(true, "plateaued");
  const std::vector<std::shared_ptr<Stopper>> stoppers{no, budget, plateau};
  WindDown wind_down;
  CHECK(wind_down.check_stop_all(stoppers));
  CHECK(wind_down.stop_all_reason() == "time budget of 10 s reached");
  CHECK(wind_down.winding_down());
  CHECK_FALSE(wind_down.interrupted());  // a stop_all ends the experiment FINISHED
  CHECK(plateau->asked == 0);
  CHECK_FALSE(wind_down.check_stop_all(stoppers));
  CHECK(no->asked == 1);
  CHECK(budget->asked == 1);
}
