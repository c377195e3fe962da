// ResultGrid's best and Pareto front judge as the store's views do: a trial
// in ERROR is never the best, whatever it last reported.
#include "tune/result_grid.h"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

using tune::Json;
using tune::Mode;
using tune::Result;
using tune::ResultGrid;
using tune::TrialStatus;

namespace {

Result trial(std::string id, TrialStatus status, Json metrics) {
  Result r;
  r.trial_id = std::move(id);
  r.status = status;
  r.metrics = metrics;
  r.history = {std::move(metrics)};
  return r;
}

}  // namespace

TEST_CASE("get_best_result skips a trial in ERROR in every scope") {
  const ResultGrid grid({trial("failed", TrialStatus::kError, {{"loss", 1}}),
                         trial("done", TrialStatus::kTerminated, {{"loss", 5}})},
                        "loss", Mode::kMin, "/runs/x");
  for (const std::string scope : {"last", "avg", "all"}) {
    INFO(scope);
    CHECK(grid.get_best_result("", std::nullopt, scope).trial_id == "done");
  }
  const ResultGrid only_failed({trial("failed", TrialStatus::kError, {{"loss", 1}})}, "loss",
                               Mode::kMin, "/runs/x");
  CHECK_THROWS_AS(only_failed.get_best_result(), tune::Error);
}

TEST_CASE("get_pareto_front leaves out a trial in ERROR") {
  const ResultGrid grid({trial("failed", TrialStatus::kError, {{"loss", 1}, {"ms", 1}}),
                         trial("done", TrialStatus::kTerminated, {{"loss", 5}, {"ms", 5}})},
                        "loss", Mode::kMin, "/runs/x", {{"loss", Mode::kMin}, {"ms", Mode::kMin}});
  const auto front = grid.get_pareto_front();
  REQUIRE(front.size() == 1);
  CHECK(front[0]->trial_id == "done");
}
