// Search-space domains: how one hyperparameter is drawn.
//
// A Domain is a small value type (kind + bounds + values), so searchers can
// look inside it (TPE and GP-BO need the kind, the bounds, the log scale),
// copy it and print it. Built by the factory functions below, which validate
// their arguments and throw tune::ConfigError saying what is wrong
// ("loguniform needs 0 < lower < upper, got [0, 1]").
//
// Semantics follow Ray Tune (tune.search.sample):
//   uniform(lo, hi)          float in [lo, hi)
//   quniform(lo, hi, q)      uniform, rounded to a multiple of q; hi inclusive
//   loguniform(lo, hi)       float, uniform in log space, 0 < lo
//   qloguniform(lo, hi, q)   loguniform rounded to a multiple of q; hi inclusive
//   randn(mean, sd)          normal float
//   qrandn(mean, sd, q)      normal, rounded to a multiple of q
//   randint(lo, hi)          integer in [lo, hi): upper EXCLUSIVE
//   qrandint(lo, hi, q)      multiple of q in [lo, hi]: upper INCLUSIVE
//   lograndint(lo, hi)       integer, log-uniform in [lo, hi): upper exclusive
//   qlograndint(lo, hi, q)   multiple of q, log-uniform in [lo, hi]: inclusive
//   choice(values)           one of the values, uniformly, any JSON types
//   grid_search(values)      not sampled: every value is its own grid cell
//   sample_from(fn)          conditional: fn(config) computed from the other
//                            keys once they are resolved (C++ only)
// The float q kinds need lo and hi to be multiples of q (Ray's check), so the
// rounded values stay inside the bounds. The integer q kinds take any bounds
// and draw the multiples of q inside them (qlograndint(1, 10, 2): 2..10).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/config.h"

namespace tune {

// The random source of every searcher: a fixed algorithm (not
// std::default_random_engine) so a seed means the same configs on every
// platform and compiler.
using Rng = std::mt19937_64;

// A conditional value: gets the whole config with every other domain already
// resolved (Ray's sample_from(lambda spec: ...) with spec.config).
using ConditionalFn = std::function<Json(const Json& config)>;

class Domain {
 public:
  enum class Kind {
    kUniform,
    kQUniform,
    kLogUniform,
    kQLogUniform,
    kRandn,
    kQRandn,
    kRandInt,
    kQRandInt,
    kLogRandInt,
    kQLogRandInt,
    kChoice,
    kGridSearch,
    kSampleFrom,
  };

  Kind kind() const { return kind_; }
  // The bounds as given (randint: upper exclusive; qrandint: inclusive), an
  // integer q kind's moved inward to the multiples of q.
  // randn: -inf and +inf.
  double lower() const { return lower_; }
  double upper() const { return upper_; }
  double q() const { return q_; }                              // 0 unless quantized
  double mean() const { return mean_; }                        // randn, qrandn
  double sd() const { return sd_; }                            // randn, qrandn
  const std::vector<Json>& values() const { return values_; }  // choice, grid_search

  bool is_grid() const { return kind_ == Kind::kGridSearch; }
  bool is_conditional() const { return kind_ == Kind::kSampleFrom; }
  bool is_categorical() const { return kind_ == Kind::kChoice || kind_ == Kind::kGridSearch; }
  bool is_integer() const;  // the randint family: draws are JSON integers
  bool is_log() const;      // loguniform, qloguniform, lograndint, qlograndint
  bool is_normal() const { return kind_ == Kind::kRandn || kind_ == Kind::kQRandn; }

  // Integer kinds: the smallest and largest value a draw can take.
  int64_t min_int() const;
  int64_t max_int() const;

  // One draw. Not valid for grid_search (expanded, not sampled) nor
  // sample_from (computed from the config; see ParamSpace). Float kinds
  // return a JSON float, the randint family a JSON integer, choice one of its
  // values. Every kind takes one draw from `rng` except randn/qrandn (two).
  Json sample(Rng& rng) const;

  // `value` moved onto the domain's lattice: rounded to q or to an integer
  // and clamped into the bounds. For searchers that propose values on a
  // continuous scale. Numeric kinds only.
  Json snap(double value) const;

  // Calls the conditional function (sample_from only).
  Json evaluate(const Json& config) const;

  // "uniform(-5, 5)", "qrandint(0, 10, 2)", "choice([32, 64])"...
  std::string describe() const;

  friend Domain uniform(double lower, double upper);
  friend Domain quniform(double lower, double upper, double q);
  friend Domain loguniform(double lower, double upper);
  friend Domain qloguniform(double lower, double upper, double q);
  friend Domain randn(double mean, double sd);
  friend Domain qrandn(double mean, double sd, double q);
  friend Domain randint(int64_t lower, int64_t upper);
  friend Domain qrandint(int64_t lower, int64_t upper, int64_t q);
  friend Domain lograndint(int64_t lower, int64_t upper);
  friend Domain qlograndint(int64_t lower, int64_t upper, int64_t q);
  friend Domain choice(std::vector<Json> values);
  friend Domain grid_search(std::vector<Json> values);
  friend Domain sample_from(ConditionalFn fn, std::string description);

 private:
  explicit Domain(Kind kind) : kind_(kind) {}

  Kind kind_;
  double lower_ = 0;
  double upper_ = 0;
  double q_ = 0;
  double mean_ = 0;
  double sd_ = 0;
  std::vector<Json> values_;
  std::shared_ptr<const ConditionalFn> fn_;  // shared: Domain stays cheap to copy
  std::string description_;                  // sample_from only
};

// Each throws tune::ConfigError on invalid bounds, q or an empty value list.
Domain uniform(double lower, double upper);                // lower < upper, both finite
Domain quniform(double lower, double upper, double q);     // q > 0 divides both bounds
Domain loguniform(double lower, double upper);             // 0 < lower < upper
Domain qloguniform(double lower, double upper, double q);  // and q divides both bounds
Domain randn(double mean = 0, double sd = 1);              // sd > 0
Domain qrandn(double mean, double sd, double q);           // sd > 0, q > 0
Domain randint(int64_t lower, int64_t upper);              // lower < upper; upper exclusive
Domain qrandint(int64_t lower, int64_t upper,
                int64_t q);                       // q >= 1; two multiples of q in [lower, upper]
Domain lograndint(int64_t lower, int64_t upper);  // 1 <= lower < upper; exclusive
Domain qlograndint(int64_t lower, int64_t upper, int64_t q);  // 1 <= lower; likewise
Domain choice(std::vector<Json> values);                      // at least one value
Domain grid_search(std::vector<Json> values);                 // at least one value
// `description` is what describe() prints (a function has no printable form).
Domain sample_from(ConditionalFn fn, std::string description = "sample_from(<function>)");

}  // namespace tune
