// Helpers for searcher tests: run a searcher sequentially on a function
// (objectives.h has the functions).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <vector>

#include "search/searcher.h"
#include "tests/search/objectives.h"

namespace tune::search::testing {

// Suggests, evaluates and completes `n` trials one at a time; returns the
// configs. `f` gives the "loss" metric.
inline std::vector<Json> run_sequential(Searcher& searcher, int n,
                                        const std::function<double(const Json&)>& f,
                                        int first_id = 0) {
  std::vector<Json> configs;
  for (int i = 0; i < n; ++i) {
    const std::string id = "t" + std::to_string(first_id + i);
    Suggestion s = searcher.suggest(id);
    REQUIRE(s.status == Suggestion::Status::kConfig);
    const Json result{{"loss", f(s.config)}};
    searcher.on_trial_result(id, result);
    searcher.on_trial_complete(id, &result, false);
    configs.push_back(std::move(s.config));
  }
  return configs;
}

inline double best_of(const std::vector<Json>& configs,
                      const std::function<double(const Json&)>& f) {
  double best = INFINITY;
  for (const Json& c : configs) best = std::min(best, f(c));
  return best;
}

}  // namespace tune::search::testing
