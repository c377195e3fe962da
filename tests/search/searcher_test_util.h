// Helpers for searcher tests: run a searcher sequentially on a function.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <vector>

#include "search/searcher.h"

namespace tune::search::testing {

inline double branin(const Json& c) {
  const double x1 = c["x1"].get<double>(), x2 = c["x2"].get<double>();
  const double pi = std::numbers::pi;
  const double t = x2 - 5.1 / (4 * pi * pi) * x1 * x1 + 5 / pi * x1 - 6;
  return t * t + 10 * (1 - 1 / (8 * pi)) * std::cos(x1) + 10;
}

inline const ParamSpace& branin_space() {
  static const ParamSpace space{{"x1", uniform(-5, 10)}, {"x2", uniform(0, 15)}};
  return space;
}

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
