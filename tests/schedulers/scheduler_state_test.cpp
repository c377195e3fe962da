// decode_scheduler_state on the states the real schedulers save: what a
// reader sees matches what the scheduler decides.
#include "schedulers/scheduler_state.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/errors.h"
#include "schedulers/factory.h"
#include "tests/schedulers/trace.h"

using namespace tune;
using namespace tune::schedulers;
using namespace tune::schedulers::testing;

namespace {

// The saved state as the store keeps it: JSON text.
Json saved(const TrialScheduler& s) { return Json::parse(s.save().dump()); }

}  // namespace

TEST_CASE("ASHA's rungs read lowest first, in the metric's units, with the cut-off it stops by") {
  // The scheduler's own mode, not the experiment's, says which way is better.
  const Json options{{"max_t", 9}, {"grace_period", 1}, {"reduction_factor", 3}, {"mode", "min"}};
  auto s = make_scheduler("asha", options);
  s->set_search_properties("score", Mode::kMax);
  Trace t(*s);
  for (auto id : {"a", "b", "c", "d"}) t.add(id);
  for (auto [id, loss] : {std::pair{"a", 0.4}, {"b", 0.1}, {"c", 0.3}}) t.report(id, 1, loss);
  t.report("b", 3, 0.05);

  const SchedulerState state = decode_scheduler_state("asha", options, Mode::kMax, saved(*s));
  CHECK(state.hyperband.empty());
  REQUIRE(state.asha.size() == 1);
  const auto& rungs = state.asha[0].rungs;
  REQUIRE(rungs.size() == 3);
  CHECK(rungs[0].milestone == 1);
  CHECK(rungs[1].milestone == 3);
  CHECK(rungs[2].milestone == 9);
  CHECK(rungs[0].recorded ==
        std::vector<std::pair<std::string, double>>{{"a", 0.4}, {"b", 0.1}, {"c", 0.3}});
  CHECK(rungs[1].recorded == std::vector<std::pair<std::string, double>>{{"b", 0.05}});
  CHECK(rungs[1].cutoff == 0.05);
  CHECK(std::isnan(rungs[2].cutoff));
  // A loss a little worse than the cut-off stops, a little better continues.
  const double cut = rungs[0].cutoff;
  CHECK(cut > 0.1);
  CHECK(cut < 0.3);
  auto same = make_scheduler("asha", options);
  same->set_search_properties("score", Mode::kMax);
  same->restore(saved(*s));
  Trace t2(*same);
  t2.add("e");
  CHECK(t.report("d", 1, cut + 1e-9) == kStop);
  CHECK(t2.report("e", 1, cut - 1e-9) == kContinue);
}

TEST_CASE(
    "asynchronous HyperBand's state reads as ASHA's rungs over its brackets, cut at eta's "
    "quantile") {
  const Json options{{"asynchronous", true}, {"max_t", 9}, {"reduction_factor", 3}, {"seed", 1}};
  auto s = make_scheduler("hyperband", options);
  s->set_search_properties("score", Mode::kMax);
  Trace t(*s);
  for (int i = 0; i < 12; ++i) {
    const std::string id = "t" + std::to_string(i);
    t.add(id);
    t.report(id, 1, 0.1 * i);
  }
  const SchedulerState state = decode_scheduler_state("hyperband", options, Mode::kMax, saved(*s));
  CHECK(state.hyperband.empty());
  // HyperBand's three brackets (first milestones 9, 3, 1) as ASHA's.
  REQUIRE(state.asha.size() == 3);
  CHECK(state.asha[0].rungs.size() == 3);
  CHECK(state.asha[1].rungs.size() == 2);
  CHECK(state.asha[2].rungs.size() == 1);
  const auto& lowest = state.asha[0].rungs[0];
  CHECK(lowest.milestone == 1);
  REQUIRE(lowest.recorded.size() >= 2);
  // Values as reported (mode max).
  for (const auto& [id, value] : lowest.recorded) {
    CHECK(value == doctest::Approx(0.1 * std::stoi(id.substr(1))));
  }
  std::vector<double> values;
  for (const auto& [id, value] : lowest.recorded) values.push_back(value);
  std::sort(values.begin(), values.end());
  // eta = 3: the 2/3 quantile, not ASHA's default 3/4.
  const double at = (static_cast<double>(values.size()) - 1) * 2 / 3;
  const auto lo = static_cast<size_t>(at);
  const double expected =
      lo + 1 < values.size() ? values[lo] + (at - lo) * (values[lo + 1] - values[lo]) : values[lo];
  CHECK(lowest.cutoff == doctest::Approx(expected));
}

TEST_CASE("HyperBand's brackets read as it reports them, live trials in the metric's units") {
  const Json options{{"max_t", 9}, {"reduction_factor", 3}};
  auto s = make_scheduler("hyperband", options);
  s->set_search_properties("score", Mode::kMin);
  Trace t(*s);
  for (auto id : {"a", "b", "c", "p", "q", "r", "u", "v"}) t.add(id);
  t.report("a", 2, 0.7);
  t.report("p", 3, 0.2);
  t.report("q", 3, 0.5);

  const SchedulerState state = decode_scheduler_state("hyperband", options, Mode::kMin, saved(*s));
  CHECK(state.asha.empty());
  REQUIRE(state.hyperband.size() == 2);
  // (band, s, n, milestone, halvings left, live trials) of each bracket.
  const auto shape = [](const SchedulerState::HyperBandBracket& b) {
    return std::tuple(b.band, b.s, b.n, b.milestone, b.halvings, b.live.size());
  };
  const auto& first = state.hyperband[0];   // s=0: 3 trials to 9
  const auto& second = state.hyperband[1];  // s=1: 5 trials from 3
  CHECK(shape(first) == std::tuple(int64_t{0}, int64_t{0}, int64_t{3}, 9.0, int64_t{0}, size_t{3}));
  CHECK(shape(second) ==
        std::tuple(int64_t{0}, int64_t{1}, int64_t{5}, 3.0, int64_t{1}, size_t{5}));
  CHECK(first.live[0].trial_id == "a");
  CHECK(first.live[0].time == 2);
  CHECK(first.live[0].value == 0.7);
  CHECK_FALSE(first.live[1].value);  // no result yet
  CHECK(second.live[1].trial_id == "q");
  CHECK(second.live[1].value == 0.5);
}

TEST_CASE("schedulers without a view, and states not saved yet, read as empty; others throw") {
  for (const char* type : {"fifo", "median_stopping_rule", "pbt", "pb2", "custom"}) {
    const SchedulerState state =
        decode_scheduler_state(type, Json::object(), Mode::kMax, Json{{"anything", 1}});
    CHECK(state.asha.empty());
    CHECK(state.hyperband.empty());
  }
  CHECK(decode_scheduler_state("asha", Json::object(), Mode::kMax, Json()).asha.empty());
  CHECK(decode_scheduler_state("asha", Json::object(), Mode::kMax, Json::object()).asha.empty());
  // A synchronous HyperBand's options over an ASHA's state.
  auto asha = make_scheduler("asha", Json::object());
  asha->set_search_properties("score", Mode::kMax);
  CHECK_THROWS_WITH_AS(
      decode_scheduler_state("hyperband", Json::object(), Mode::kMax, saved(*asha)),
      doctest::Contains("scheduler 'hyperband'"), Error);
  CHECK_THROWS_AS(
      decode_scheduler_state("asha", Json{{"reduction_factor", "x"}}, Mode::kMax, saved(*asha)),
      ConfigError);
}

TEST_CASE("a saved state names its scheduler's layout") {
  auto asha = make_scheduler("asha", Json::object());
  auto hyperband = make_scheduler("hyperband", Json::object());
  auto async = make_scheduler("hyperband", Json{{"asynchronous", true}});
  CHECK(saved_scheduler_type(saved(*asha)) == "asha");
  CHECK(saved_scheduler_type(saved(*async)) == "asha");
  CHECK(saved_scheduler_type(saved(*hyperband)) == "hyperband");
  CHECK(saved_scheduler_type(saved(*make_scheduler("fifo", Json::object()))).empty());
  CHECK(saved_scheduler_type(Json()).empty());
}
