// TrialScheduler::decision_reason: each scheduler says, in the words the
// trial's status reason carries, what it compared when it ended a trial.
// The decisive result is given straight to on_trial_result: the controller
// asks for the reason before on_trial_remove, which the trace calls at once.
#include <doctest/doctest.h>

#include <cmath>

#include "schedulers/factory.h"
#include "schedulers/scheduler_state.h"
#include "tests/schedulers/trace.h"

using namespace tune;
using namespace tune::schedulers;
using namespace tune::schedulers::testing;

namespace {

Decision decide(TrialScheduler& s, Trace& t, const std::string& id, double time, double score) {
  const Json result{{"score", score}, {"training_iteration", time}, {"trial_id", id}};
  return s.on_trial_result(t.view(id), result);
}

}  // namespace

TEST_CASE("ASHA names the rung, the value and the cut-off it was compared with, or max_t") {
  const Json options{{"max_t", 9}, {"grace_period", 1}, {"reduction_factor", 3}};
  auto s = make_scheduler("asha", options);
  s->set_search_properties("score", Mode::kMax);
  Trace t(*s);
  for (auto id : {"a", "b", "c"}) t.add(id);
  CHECK(decide(*s, t, "a", 1, 0.5) == kContinue);
  CHECK(s->decision_reason("a").empty());
  CHECK(decide(*s, t, "b", 1, 0.1) == kStop);
  CHECK(s->decision_reason("b") ==
        "AsyncHyperBand at rung 1 of 3 (milestone 1): score 0.1 is below the cut-off 0.5 of "
        "the 1 trial recorded there");
  CHECK(decide(*s, t, "a", 9, 0.9) == kStop);
  CHECK(s->decision_reason("a") == "AsyncHyperBand: reached max_t 9, where every trial ends");
  s->on_trial_remove(t.view("b"));
  CHECK(s->decision_reason("b").empty());  // forgotten once removed

  // What a reader of the saved state sees: the cut-off each value met on arrival.
  const Json saved = Json::parse(s->save().dump());
  const SchedulerState state = decode_scheduler_state("asha", options, Mode::kMax, saved);
  const auto& lowest = state.asha.at(0).rungs.at(0);
  REQUIRE(lowest.cutoff_at_arrival.size() == 2);
  CHECK(std::isnan(lowest.cutoff_at_arrival[0]));
  CHECK(lowest.cutoff_at_arrival[1] == 0.5);
  CHECK(lowest.below_cutoff == std::vector<bool>{false, true});
}

TEST_CASE("ASHA in min mode says a stopped trial's value is above the cut-off") {
  auto s = make_scheduler("asha", Json{{"max_t", 9}, {"grace_period", 1}, {"reduction_factor", 3}});
  s->set_search_properties("loss", Mode::kMin);
  Trace t(*s);
  for (auto id : {"a", "b"}) t.add(id);
  const auto loss = [&](const std::string& id, double value) {
    return s->on_trial_result(t.view(id),
                              Json{{"loss", value}, {"training_iteration", 1}, {"trial_id", id}});
  };
  CHECK(loss("a", 0.5) == kContinue);
  CHECK(loss("b", 0.9) == kStop);
  CHECK(s->decision_reason("b") ==
        "AsyncHyperBand at rung 1 of 3 (milestone 1): loss 0.9 is above the cut-off 0.5 of "
        "the 1 trial recorded there");
}

TEST_CASE("HyperBand names the milestone and the rank that cut a trial, and a finished one") {
  const Json options{{"max_t", 9}, {"reduction_factor", 3}};
  auto s = make_scheduler("hyperband", options);
  s->set_search_properties("score", Mode::kMax);
  Trace t(*s);
  // Brackets s=0 (a, b, c; straight to 9) and s=1 (p..v; first milestone 3).
  for (auto id : {"a", "b", "c", "p", "q", "r", "u", "v"}) t.add(id);
  const std::vector<std::pair<const char*, double>> at_3 = {
      {"p", 0.5}, {"q", 0.4}, {"r", 0.3}, {"u", 0.2}};
  for (const auto& [id, score] : at_3) CHECK(t.report(id, 3, score) == kPause);
  CHECK(decide(*s, t, "v", 3, 0.1) == kStop);  // the last of five: the halving keeps two
  CHECK(s->decision_reason("v") ==
        "HyperBand (band 0, bracket s=1) at milestone 3: score 0.1 ranked 5 of 5, and only the "
        "best 2 go on");
  CHECK(s->decision_reason("r") ==
        "HyperBand (band 0, bracket s=1) at milestone 3: score 0.3 ranked 3 of 5, and only the "
        "best 2 go on");
  CHECK(s->decision_reason("p").empty());  // goes on
  CHECK(decide(*s, t, "a", 9, 0.9) == kStop);
  CHECK(s->decision_reason("a") ==
        "HyperBand (band 0, bracket s=0): finished at its last "
        "milestone 9");

  // The bracket's milestones and trials, for the page's history.
  const Json saved = Json::parse(s->save().dump());
  const SchedulerState state = decode_scheduler_state("hyperband", options, Mode::kMax, saved);
  REQUIRE(state.hyperband.size() == 2);
  CHECK(state.hyperband[1].milestones == std::vector<double>{3, 9});
  CHECK(state.hyperband[1].n0 == 5);
  CHECK(state.hyperband[1].trials == std::vector<std::string>{"p", "q", "r", "u", "v"});
}
