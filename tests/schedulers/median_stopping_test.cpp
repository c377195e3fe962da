// Median stopping rule traces: a trial's best result against the median of
// the other trials' running means at the same time.
#include "schedulers/internal/median_stopping.h"

#include <doctest/doctest.h>

#include "tests/schedulers/trace.h"

using namespace tune;
using namespace tune::schedulers;
using namespace tune::schedulers::testing;

namespace {

MedianStoppingRule median(int64_t min_samples, bool hard_stop = true, double min_time_slice = 0,
                          Mode mode = Mode::kMax) {
  MedianStoppingRule s({.time_attr = "training_iteration",
                        .grace_period = 2,
                        .min_samples_required = min_samples,
                        .min_time_slice = min_time_slice,
                        .hard_stop = hard_stop});
  s.set_search_properties("score", mode);
  return s;
}

}  // namespace

TEST_CASE("median rule waits for min_samples_required trials at the same time") {
  MedianStoppingRule s = median(2);
  Trace t(s);
  for (auto id : {"a", "b", "c", "d"}) t.add(id), t.choose({id});
  CHECK(t.report("a", 1, 1.0) == kContinue);  // before grace_period
  CHECK(t.report("b", 1, 2.0) == kContinue);
  CHECK(t.report("c", 1, 0.4) == kContinue);
  CHECK(t.report("a", 2, 1.0) == kContinue);  // no other trial at t=2
  CHECK(t.report("b", 2, 2.0) == kContinue);  // only a: 1 < 2 samples
  // a and b at t=2: running means over [2, 2] are 1 and 2, median 1.5;
  // c's best so far is 0.5 < 1.5.
  CHECK(t.report("c", 2, 0.5) == kStop);
  CHECK(t.report("b", 3, 0.0) == kContinue);  // no other trial at t=3 yet
  CHECK(t.report("a", 3, 1.0) == kContinue);  // only b: 1 < 2 samples
  CHECK(t.report("d", 1, 1.2) == kContinue);
  // Others at t=2: a, b and c (stopped trials keep their results); running
  // means over [2, 2]: 1, 2, 0.5, median 1. d's best so far, 1.2, is not worse.
  CHECK(t.report("d", 2, 0.0) == kContinue);
  // At t=3: running means over [2, 3]: a (1 + 1) / 2 = 1, b (2 + 0) / 2 = 1;
  // d's best is still 1.2.
  CHECK(t.report("d", 3, 0.0) == kContinue);
  CHECK(t.report("d", 4, 0.0) == kContinue);  // nobody at t=4
}

TEST_CASE("median rule in mode min stops a trial whose lowest loss is above the median") {
  MedianStoppingRule s = median(1, true, 0, Mode::kMin);
  Trace t(s);
  for (auto id : {"a", "b"}) t.add(id), t.choose({id});
  CHECK(t.report("a", 2, 1.0) == kContinue);
  CHECK(t.report("a", 3, 3.0) == kContinue);  // a's running mean over [2, 3]: 2
  CHECK(t.report("b", 2, 2.5) == kStop);      // median {a: 1} at t=2; b's best 2.5 is worse
}

TEST_CASE("median rule yields to waiting trials when samples are short") {
  MedianStoppingRule s = median(3, true, /*min_time_slice=*/2);
  Trace t(s);
  t.add("a");
  t.choose({"a"});
  t.add("b");                                 // pending: waits for a slot
  CHECK(t.report("a", 1, 1.0) == kContinue);  // before grace_period
  CHECK(t.report("a", 2, 1.0) == kPause);     // too few samples and b waits: yield
  CHECK(t.choose({"b", "a"}) == "b");         // pending trials first, as Ray's FIFO
  CHECK(t.report("b", 2, 1.0) == kPause);     // a waits now
  CHECK(t.choose({"a"}) == "a");
  CHECK(t.report("a", 3, 1.0) == kContinue);  // 1 since the last yield: not > 2
  CHECK(t.report("a", 5, 1.0) == kPause);     // 3 since: yield again (b waits)
}

TEST_CASE("median rule with hard_stop=false pauses, then lets the trial run FIFO") {
  MedianStoppingRule s = median(1, /*hard_stop=*/false);
  Trace t(s);
  for (auto id : {"a", "b"}) t.add(id), t.choose({id});
  CHECK(t.report("a", 2, 1.0) == kContinue);
  CHECK(t.report("b", 2, 0.5) == kPause);  // would stop
  CHECK(t.choose({"b"}) == "b");
  CHECK(t.report("b", 3, 0.0) == kContinue);  // soft-stopped trials are not judged again
  CHECK(s.debug_string().find("num_stopped=1") != std::string::npos);
}

TEST_CASE("median rule save and restore continue with identical decisions") {
  MedianStoppingRule s1 = median(2), s2 = median(2);
  Trace t1(s1), t2(s2);
  for (auto id : {"a", "b", "c", "d"}) t1.add(id), t1.choose({id}), t2.add(id), t2.choose({id});
  for (int step = 1; step <= 3; ++step) {
    t1.report("a", step, 1.0 * step);
    t1.report("b", step, 0.5 * step);
  }
  round_trip(s1, s2);
  for (int step = 1; step <= 4; ++step) {
    for (auto id : {"c", "d"}) {
      const double v = id[0] == 'c' ? 0.2 * step : 0.9 * step;
      CHECK(t1.report(id, step, v) == t2.report(id, step, v));
    }
  }
  CHECK(s1.save() == s2.save());
}
