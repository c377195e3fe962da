#include "schedulers/internal/fifo.h"

#include <doctest/doctest.h>

#include "schedulers/factory.h"

using namespace tune;
using namespace tune::schedulers;

TEST_CASE("FIFO continues every result and runs paused, then oldest pending trials") {
  FifoScheduler fifo;
  const Json config = Json::object();
  const std::string a = "a", b = "b", c = "c";
  CHECK(fifo.on_trial_result({a, TrialStatus::kRunning, config}, {{"loss", 1.0}}) ==
        Decision::kContinue);
  std::vector<TrialView> waiting{{a, TrialStatus::kPending, config},
                                 {b, TrialStatus::kPending, config}};
  CHECK(fifo.choose_trial_to_run(waiting) == 0);
  CHECK(fifo.choose_trial_to_run(waiting) == 0);  // idempotent
  waiting.push_back({c, TrialStatus::kPaused, config});
  CHECK(fifo.choose_trial_to_run(waiting) == 2);
  CHECK(fifo.choose_trial_to_run({}) == -1);
}

TEST_CASE("scheduler factory names the bad option") {
  CHECK(make_scheduler("fifo", Json::object())->debug_string() == "FIFO");
  CHECK_THROWS_WITH_AS(make_scheduler("asha2", Json::object()),
                       doctest::Contains("unknown scheduler 'asha2'"), ConfigError);
  try {
    make_scheduler("fifo", Json{{"max_t", 3}});
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "max_t");
  }
}
