// ASHA decision traces, written from the algorithm: a rung's cut-off is the
// (1 - 1/rf) quantile of the values recorded there before (np.nanpercentile,
// linear interpolation); a first arrival below it stops.
#include "schedulers/internal/asha.h"

#include <doctest/doctest.h>

#include <cmath>

#include "schedulers/internal/stats.h"
#include "tests/schedulers/trace.h"

using namespace tune;
using namespace tune::schedulers;
using namespace tune::schedulers::testing;

namespace {

AshaScheduler asha(double rf, double max_t, Mode mode = Mode::kMax, bool promotion = false) {
  AshaScheduler s(
      {.max_t = max_t, .grace_period = 1, .reduction_factor = rf, .promotion = promotion});
  s.set_search_properties("score", mode);
  return s;
}

}  // namespace

TEST_CASE("a running percentile is numpy's of the values added so far") {
  std::vector<double> values;
  for (int i = 0; i < 300; ++i) {
    values.push_back(i % 17 == 0 ? NAN : std::round(std::sin(i * 2.3) * 20) / 4);  // ties too
  }
  detail::RunningPercentile running(values);
  std::vector<double> added;
  for (size_t i = 0; i < values.size(); ++i) {
    for (double percent : {0.0, 50.0, (1 - 1.0 / 3) * 100, 75.0, 100.0}) {
      const double expected = detail::nanpercentile(added, percent);
      if (std::isnan(expected)) {
        CHECK(std::isnan(running.percentile(percent)));
      } else {
        CHECK(running.percentile(percent) == expected);
      }
    }
    running.add(i);
    added.push_back(values[i]);
  }
}

TEST_CASE("a streaming percentile is numpy's of the values added so far, ties and NaN too") {
  for (double percent : {0.0, 50.0, (1 - 1.0 / 3) * 100, 75.0, 100.0}) {
    detail::StreamingPercentile streaming(percent);
    std::vector<double> added;
    CHECK(std::isnan(streaming.percentile()));
    for (int i = 0; i < 300; ++i) {
      const double value = i % 17 == 5 ? NAN : std::round(std::sin(i * 2.3) * 20) / 4;
      streaming.add(value);
      added.push_back(value);
      CHECK(streaming.percentile() == detail::nanpercentile(added, percent));
    }
    streaming.clear();
    CHECK(streaming.size() == 0);
  }
}

TEST_CASE("ASHA rungs sit at grace * rf^k as Ray computes them") {
  CHECK(asha(4, 100).milestones() == std::vector<double>{64, 16, 4, 1});
  CHECK(asha(3, 81).milestones() == std::vector<double>{81, 27, 9, 3, 1});
  AshaScheduler s({.max_t = 100, .grace_period = 2, .reduction_factor = 3, .brackets = 2});
  CHECK(s.milestones(0) == std::vector<double>{54, 18, 6, 2});
  CHECK(s.milestones(1) == std::vector<double>{54, 18, 6});
}

TEST_CASE("the cut-off is numpy's linear percentile") {
  using detail::nanpercentile;
  CHECK(nanpercentile({1, 2}, 75) == 1.75);
  CHECK(nanpercentile({2, 0.5, 1}, 75) == 1.5);
  CHECK(nanpercentile({0.5, 1, 2, 1.8}, 75) == doctest::Approx(1.85));
  CHECK(nanpercentile({1, 2}, (1 - 1.0 / 3) * 100) == doctest::Approx(5.0 / 3));
  CHECK(nanpercentile({1, 2, 3, NAN}, (1 - 1.0 / 3) * 100) == doctest::Approx(7.0 / 3));
  CHECK(nanpercentile({4}, 75) == 4);
  CHECK(std::isnan(nanpercentile({NAN}, 75)));
}

TEST_CASE("ASHA rf=4 mode max: first arrivals below the rung's 75th percentile stop") {
  AshaScheduler s = asha(4, 100);
  Trace t(s);
  for (auto id : {"a", "b", "c", "d", "e"}) t.add(id);
  CHECK(t.report("a", 1, 1.0) == kContinue);  // empty rung: no cut-off
  CHECK(t.report("b", 1, 2.0) == kContinue);  // cut-off 1.0
  CHECK(t.report("c", 1, 0.5) == kStop);      // cut-off of {1, 2}: 1.75
  CHECK(t.report("d", 1, 1.8) == kContinue);  // cut-off of {1, 2, 0.5}: 1.5
  CHECK(t.report("e", 1, 1.5) == kStop);      // cut-off of {1, 2, .5, 1.8}: 1.85
  CHECK(t.report("a", 2, 0.0) == kContinue);  // between rungs: no judgement
  CHECK(t.report("a", 3, 0.0) == kContinue);
  CHECK(t.report("a", 4, 0.1) == kContinue);  // first at rung 4
  CHECK(t.report("b", 4, 0.05) == kStop);     // below 0.1
  CHECK(t.report("d", 4, 0.2) == kContinue);
  CHECK(t.report("d", 99, 0.2) == kContinue);
  CHECK(t.report("d", 100, 0.2) == kStop);  // max_t
  CHECK(s.debug_string().find("num_stopped=4") != std::string::npos);
}

TEST_CASE("ASHA rf=4 mode min folds the sign once") {
  AshaScheduler s = asha(4, 100, Mode::kMin);
  Trace t(s);
  for (auto id : {"a", "b", "c"}) t.add(id);
  CHECK(t.report("a", 1, 1.0) == kContinue);
  CHECK(t.report("b", 1, 0.5) == kContinue);  // lower loss is better
  CHECK(t.report("c", 1, 0.9) == kStop);      // -0.9 < 75% of {-1, -0.5} = -0.625
}

TEST_CASE("ASHA rf=3 mode max cuts at the two-thirds quantile") {
  AshaScheduler s = asha(3, 81);
  Trace t(s);
  for (auto id : {"a", "b", "c", "d", "e", "f"}) t.add(id);
  CHECK(t.report("a", 1, 1) == kContinue);
  CHECK(t.report("b", 1, 2) == kContinue);
  CHECK(t.report("c", 1, 1.6) == kStop);      // cut-off of {1, 2}: 5/3
  CHECK(t.report("d", 1, 1.8) == kContinue);  // cut-off of {1, 2, 1.6}: 1.7333
  // Rung 1 = {1, 2, 1.6, 1.8} (stopped trials stay recorded): cut-off 1.8.
  CHECK(t.report("e", 1, 1.79) == kStop);
  CHECK(t.report("f", 1, 1.81) == kContinue);
  CHECK(t.report("b", 3, 5) == kContinue);
  CHECK(t.report("d", 3, 4) == kStop);  // cut-off of {5}: 5
  CHECK(t.report("b", 80, 5) == kContinue);
  CHECK(t.report("b", 81, 5) == kStop);  // max_t
}

TEST_CASE("ASHA rf=3 mode min cuts at the two-thirds quantile of negated losses") {
  AshaScheduler s = asha(3, 81, Mode::kMin);
  Trace t(s);
  for (auto id : {"a", "b", "c", "d", "e"}) t.add(id);
  CHECK(t.report("a", 1, 1.0) == kContinue);
  CHECK(t.report("b", 1, 0.5) == kContinue);   // -0.5 >= -1
  CHECK(t.report("c", 1, 0.6) == kContinue);   // -0.6 >= cut-off of {-1, -.5}: -0.6667
  CHECK(t.report("d", 1, 0.65) == kStop);      // -0.65 < cut-off of {-1, -.6, -.5}: -0.5667
  CHECK(t.report("e", 1, 0.55) == kContinue);  // -0.55 >= cut-off -0.6
}

TEST_CASE("ASHA without stop_last_trials lets a trial run past max_t") {
  AshaScheduler s(
      {.max_t = 4, .grace_period = 1, .reduction_factor = 2, .stop_last_trials = false});
  s.set_search_properties("score", Mode::kMax);
  Trace t(s);
  t.add("a");
  t.add("b");
  CHECK(t.report("a", 4, 1.0) == kContinue);
  CHECK(t.report("a", 5, 1.0) == kContinue);
  CHECK(t.report("b", 4, 0.5) == kStop);  // below the rung at 4
}

TEST_CASE("ASHA ignores results without its metric and forgets removed trials") {
  AshaScheduler s = asha(4, 100);
  Trace t(s, "training_iteration", "other");
  t.add("a");
  CHECK(t.report("a", 100, 1.0) == kContinue);  // no "score": Ray continues
  AshaScheduler s2 = asha(4, 100);
  Trace t2(s2);
  t2.add("a");
  t2.complete("a");
  t2.complete("a");  // twice, and unknown afterwards: harmless
  CHECK(t2.report("a", 1, 1.0) == kContinue);
}

TEST_CASE("ASHA promotion pauses at rungs and resumes the top 1/rf") {
  AshaScheduler s({.max_t = 4, .grace_period = 1, .reduction_factor = 2, .promotion = true});
  s.set_search_properties("score", Mode::kMax);
  CHECK(s.milestones() == std::vector<double>{4, 2, 1});
  Trace t(s);
  for (auto id : {"a", "b", "c", "d"}) t.add(id);
  CHECK(t.choose({"a", "b", "c", "d"}) == "a");
  CHECK(t.report("a", 1, 1.0) == kPause);     // 1 at the rung: top floor(1/2) = none
  CHECK(t.report("b", 1, 2.0) == kContinue);  // top 1 of 2: itself
  CHECK(t.report("c", 1, 3.0) == kContinue);  // top 1 of 3
  CHECK(t.report("d", 1, 0.5) == kPause);     // top 2 of 4: c, b
  CHECK(t.choose({"a", "d"}).empty());        // none promotable, none pending
  CHECK(t.take_stops().empty());              // b and c still run
  CHECK(t.report("b", 2, 2.0) == kPause);     // alone at rung 2
  CHECK(t.report("c", 2, 1.0) == kPause);     // rung 2 = {b 2, c 1}: top 1 is b
  CHECK(t.choose({"a", "d", "b", "c"}, /*peek=*/true) == "b");
  CHECK(t.choose({"a", "d", "b", "c"}) == "b");  // idempotent
  t.add("e");
  CHECK(t.choose({"e", "a", "d", "c"}) == "e");  // nothing promotable: a new trial
  CHECK(t.report("e", 1, 5.0) == kContinue);     // rung 1 top 2 of 5: e, c
  CHECK(t.report("b", 3, 2.0) == kContinue);
  CHECK(t.report("b", 4, 2.0) == kStop);   // max_t
  CHECK(t.take_stops().empty());           // e still runs
  CHECK(t.report("e", 2, 0.1) == kPause);  // rung 2 = {b 2, c 1, e .1}: top 1 is b
  CHECK(t.choose({"a", "d", "c", "e"}).empty());
  CHECK(t.take_stops() == std::vector<std::string>{"a", "c", "d", "e"});  // lost
}

TEST_CASE("ASHA save and restore continue with identical decisions") {
  for (bool promotion : {false, true}) {
    AshaScheduler s1 = asha(3, 27, Mode::kMax, promotion);
    AshaScheduler s2 = asha(3, 27, Mode::kMax, promotion);
    Trace t1(s1), t2(s2);
    std::vector<std::string> ids;
    for (int i = 0; i < 12; ++i) ids.push_back("t" + std::to_string(i));
    for (const auto& id : ids) t1.add(id), t2.add(id);
    auto value = [](int i, int step) { return std::sin(i * 1.7 + step * 0.3) + 0.1 * step; };
    for (int i = 0; i < 6; ++i) t1.report(ids[i], 1, value(i, 1));
    round_trip(s1, s2);  // s2 continues where s1 is
    for (int step = 1; step <= 27; ++step) {
      for (int i = 6; i < 12; ++i) {
        if (t1.status(ids[i]) == TrialStatus::kTerminated) continue;
        if (t1.status(ids[i]) == TrialStatus::kPaused) continue;
        CHECK(t1.report(ids[i], step, value(i, step)) == t2.report(ids[i], step, value(i, step)));
      }
    }
    CHECK(s1.save() == s2.save());
    CHECK(s1.debug_string() == s2.debug_string());
  }
}

TEST_CASE("ASHA's state saved in parts: the chunks that grew, assembling into save()") {
  AshaScheduler s = asha(3, 27);
  Trace t(s);
  StoredParts stored;
  auto write = [&] { return stored.write(s); };
  auto assembled = [&] { return stored.assembled(); };
  CHECK(write().complete);
  const auto report = [&](int i) {
    const std::string id = "t" + std::to_string(i);
    t.add(id);
    return t.report(id, 1, std::sin(i * 1.7));
  };
  for (int i = 0; i < 2500; ++i) report(i);
  StateParts parts = write();
  CHECK(!parts.complete);
  CHECK(parts.chunks.size() == 3);  // 2,500 values at milestone 1: 1,024 a chunk
  CHECK(assembled() == s.save());
  for (int i = 2500; i < 2510; ++i) report(i);
  parts = write();
  REQUIRE(parts.chunks.size() == 1);  // only the last, partial chunk
  CHECK(parts.chunks[0].index == 2);
  CHECK(parts.chunks[0].items.size() == 2510 - 2 * AshaScheduler::kStateChunk);
  CHECK(assembled() == s.save());
  CHECK(write().chunks.empty());  // nothing new

  // Resumed from the parts: the same state, deciding as the original does.
  AshaScheduler resumed = asha(3, 27);
  resumed.restore(assembled());
  CHECK(resumed.save() == s.save());
  CHECK(resumed.save_parts().complete);  // the first save after restore writes it all
  Trace r(resumed);
  for (int i = 2510; i < 2600; ++i) {
    const std::string id = "t" + std::to_string(i);
    r.add(id);
    CHECK(r.report(id, 1, std::sin(i * 1.7)) == report(i));
  }
  CHECK(resumed.save() == s.save());
}

TEST_CASE("ASHA promotion: a loser the controller is still pausing never runs again") {
  AshaScheduler s({.max_t = 4, .grace_period = 1, .reduction_factor = 2, .promotion = true});
  s.set_search_properties("score", Mode::kMax);
  Trace t(s);
  for (auto id : {"a", "b"}) t.add(id);
  CHECK(t.report("a", 1, 1.0) == kPause);     // alone at rung 1
  CHECK(t.report("b", 1, 2.0) == kContinue);  // top 1 of 2
  CHECK(t.report("b", 2, 2.0) == kPause);     // alone at rung 2
  // b's checkpoint is still being written when the scheduler finds nothing
  // promotable and nothing running: both are handed out, but the controller
  // can end only a.
  CHECK(t.choose({"a"}, /*peek=*/true).empty());
  auto losers = s.take_trials_to_stop();
  CHECK(losers == std::vector<std::string>{"a", "b"});
  s.on_trial_remove(t.view("a"));
  // Once b has paused it must not run again: it is handed out again instead.
  CHECK(t.choose({"b"}, /*peek=*/true).empty());
  CHECK(s.take_trials_to_stop() == std::vector<std::string>{"b"});
  s.on_trial_remove(t.view("b"));
  CHECK(s.take_trials_to_stop().empty());
}

TEST_CASE("ASHA leases a trial up to its next rung, and never decides inside a lease") {
  AshaScheduler s = asha(3, 81);  // rungs 1, 3, 9, 27, 81
  Trace t(s);
  t.add("a");
  CHECK(t.report("a", 1, 1.0) == kContinue);
  CHECK(s.continues_through(t.view("a"), 1) == 2);
  CHECK(t.report("a", 3, 1.0) == kContinue);
  CHECK(s.continues_through(t.view("a"), 3) == 8);
  // Rung 9 skipped: 27 is judged now, and 9 (as in Ray) at the next result.
  CHECK(t.report("a", 27, 1.0) == kContinue);
  CHECK(s.continues_through(t.view("a"), 27) == 27);
  CHECK(t.report("a", 28, 1.0) == kContinue);
  CHECK(s.continues_through(t.view("a"), 28) == 80);  // max_t stops at 81

  // A rung reached by a result without the metric is decided at the next result.
  t.add("m");
  CHECK(s.on_trial_result(t.view("m"), Json{{"training_iteration", 1}}) == kContinue);
  CHECK(s.continues_through(t.view("m"), 1) == 1);
  // Another time_attr than training_iteration: no lease.
  AshaScheduler timed({.time_attr = "time_total_s", .max_t = 81, .grace_period = 1});
  timed.set_search_properties("score", Mode::kMax);
  Trace tt(timed, "time_total_s");
  tt.add("a");
  CHECK(tt.report("a", 1, 1.0) == kContinue);
  CHECK(timed.continues_through(tt.view("a"), 1) == 1);

  // Thirty trials with scores that cross, each reporting every iteration
  // until stopped or paused: no decision other than kContinue ever falls
  // within the lease granted at the trial's last decided report.
  for (bool promotion : {false, true}) {
    AshaScheduler p({.max_t = 81,
                     .grace_period = 1,
                     .reduction_factor = 3,
                     .brackets = 2,
                     .promotion = promotion});
    p.set_search_properties("score", Mode::kMax);
    Trace tp(p);
    int decided_inside = 0, decisions = 0;
    for (int i = 0; i < 30; ++i) {
      const std::string id = "t" + std::to_string(i);
      tp.add(id);
      int64_t lease = 0;
      for (int64_t step = 1; step <= 81; ++step) {
        const double score = std::sin(i * 1.3 + step * 0.07) + 0.01 * step;
        const Decision d = tp.report(id, static_cast<double>(step), score);
        if (d != kContinue) {
          ++decisions;
          if (step <= lease) ++decided_inside;
          break;
        }
        if (step > lease) lease = p.continues_through(tp.view(id), step);
      }
    }
    CHECK(decisions > 10);
    CHECK(decided_inside == 0);
  }
}
