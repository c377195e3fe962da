// MO-ASHA's decisions at a rung, worked out by hand: a trial goes on while
// among the first ceil(n / rf) of the n recorded there by non-dominated
// rank and crowding distance.
#include "schedulers/internal/mo_asha.h"

#include <doctest/doctest.h>

using tune::Decision;
using tune::Json;
using tune::Mode;
using tune::schedulers::MoAshaScheduler;
using tune::schedulers::TrialView;

namespace {

Decision report(MoAshaScheduler& s, const std::string& id, int iteration, double acc,
                double latency, Json extra = Json::object()) {
  const Json config = Json::object();
  Json result = {{"training_iteration", iteration}, {"acc", acc}, {"lat", latency}};
  result.update(extra);
  return s.on_trial_result(TrialView{id, tune::TrialStatus::kRunning, config, &result}, result);
}

MoAshaScheduler two_objectives() {
  MoAshaScheduler s({.max_t = 8, .grace_period = 1, .reduction_factor = 2});
  s.set_objectives({{"acc", Mode::kMax}, {"lat", Mode::kMin}});
  return s;
}

}  // namespace

TEST_CASE("MO-ASHA stops a dominated trial at a rung and keeps a new trade-off") {
  MoAshaScheduler s = two_objectives();
  CHECK(report(s, "a", 1, 0.8, 10) == Decision::kContinue);  // alone at rung 1
  CHECK(report(s, "b", 1, 0.7, 12) == Decision::kStop);      // beaten by a: 2nd of 2, keep 1
  CHECK(report(s, "c", 1, 0.6, 5) == Decision::kContinue);   // a trade-off: 2nd of 3, keep 2
  CHECK(report(s, "a", 2, 0.85, 9) == Decision::kContinue);  // alone at rung 2
  // Past its rung and before the next, nothing is decided; at max_t every
  // trial stops.
  CHECK(report(s, "a", 3, 0.1, 50) == Decision::kContinue);
  CHECK(report(s, "a", 8, 0.9, 8) == Decision::kStop);
}

TEST_CASE("MO-ASHA ranks an infeasible trial after the feasible ones") {
  MoAshaScheduler s = two_objectives();
  CHECK(report(s, "a", 1, 0.5, 10) == Decision::kContinue);
  // Better in both objectives, but its constraint is violated.
  CHECK(report(s, "b", 1, 0.9, 1, {{"constraints", {1.0}}}) == Decision::kStop);
}

TEST_CASE("MO-ASHA restores its rungs, and says where trials are sure to continue") {
  MoAshaScheduler s = two_objectives();
  report(s, "a", 1, 0.8, 10);
  MoAshaScheduler restored = two_objectives();
  restored.restore(Json::parse(s.save().dump()));
  CHECK(report(restored, "b", 1, 0.7, 12) == Decision::kStop);
  const Json config = Json::object();
  const TrialView a{"a", tune::TrialStatus::kRunning, config, nullptr};
  CHECK(s.continues_through(a, 1) == 1);  // its next rung is at 2
  CHECK(s.continues_through(a, 2) == 2);  // rung 2 reached, no value there yet
  CHECK_THROWS_AS(MoAshaScheduler({.reduction_factor = 1}), tune::ConfigError);
}
