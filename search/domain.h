// Search-space domains: how one hyperparameter is drawn.
//
// A Domain is a small value type (kind + bounds + values), so searchers can
// look inside it (TPE and GP-BO need the kind, the bounds, the log scale),
// copy it and print it. Built by the factory functions below, which validate
// their arguments and throw tune::ConfigError saying what is wrong
// ("loguniform needs 0 < lower < upper, got [0, 1]").
//
// Semantics follow Ray Tune: uniform in [lower, upper); loguniform uniform in
// log space; randint integers in [lower, upper) (upper exclusive); choice one
// of the values, uniformly, values of any JSON type (mixed types are kept);
// grid_search is not sampled: every value is expanded into its own grid cell.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/config.h"

namespace tune {

// The random source of every searcher: a fixed algorithm (not
// std::default_random_engine) so a seed means the same configs on every
// platform and compiler.
using Rng = std::mt19937_64;

class Domain {
 public:
  enum class Kind { kUniform, kLogUniform, kRandInt, kChoice, kGridSearch };

  Kind kind() const { return kind_; }
  double lower() const { return lower_; }
  double upper() const { return upper_; }
  const std::vector<Json>& values() const { return values_; }  // choice, grid_search

  bool is_grid() const { return kind_ == Kind::kGridSearch; }

  // One draw. Not valid for a grid_search domain (expanded, not sampled).
  // Uniform and loguniform return a JSON float, randint a JSON integer,
  // choice one of its values.
  Json sample(Rng& rng) const;

  // "uniform(-5, 5)", "choice([32, 64])"...
  std::string describe() const;

  friend Domain uniform(double lower, double upper);
  friend Domain loguniform(double lower, double upper);
  friend Domain randint(int64_t lower, int64_t upper);
  friend Domain choice(std::vector<Json> values);
  friend Domain grid_search(std::vector<Json> values);

 private:
  Domain(Kind kind, double lower, double upper, std::vector<Json> values);

  Kind kind_;
  double lower_ = 0;
  double upper_ = 0;
  std::vector<Json> values_;
};

// Each throws tune::ConfigError on invalid bounds or an empty value list.
Domain uniform(double lower, double upper);     // lower < upper, both finite
Domain loguniform(double lower, double upper);  // 0 < lower < upper
Domain randint(int64_t lower, int64_t upper);   // lower < upper; upper exclusive
Domain choice(std::vector<Json> values);        // at least one value
Domain grid_search(std::vector<Json> values);   // at least one value

}  // namespace tune
