#include "search/domain.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

#include "core/errors.h"

namespace tune {
namespace {

// Integers beyond 2^53 do not survive the trip through Domain's double bounds.
constexpr int64_t kMaxExactInt = int64_t{1} << 53;

// A uniform double in [0, 1) from the top 53 bits of one draw. Written out
// because std::uniform_real_distribution differs between standard libraries.
double unit(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// A standard normal from two draws (Box-Muller), for the same reason.
double standard_normal(Rng& rng) {
  const double u1 = unit(rng);
  const double u2 = unit(rng);
  return std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// floor(u * n) for u in [0, 1), kept below n where rounding would reach it.
size_t scaled_index(double u, size_t n) {
  auto index = static_cast<size_t>(u * static_cast<double>(n));
  return index < n ? index : n - 1;
}

void check_finite(const char* name, double lower, double upper) {
  if (!std::isfinite(lower) || !std::isfinite(upper)) {
    throw ConfigError(fmt::format("{} needs finite bounds, got [{}, {}]", name, lower, upper));
  }
}

void check_int_bounds(const char* name, int64_t lower, int64_t upper, int64_t min_lower) {
  if (!(lower < upper) || lower < min_lower) {
    throw ConfigError(fmt::format("{} needs {}lower < upper, got [{}, {}]", name,
                                  min_lower == 1 ? "1 <= " : "", lower, upper));
  }
  if (lower < -kMaxExactInt || upper > kMaxExactInt) {
    throw ConfigError(
        fmt::format("{} bounds must lie within +-2^53, got [{}, {}]", name, lower, upper));
  }
}

// An integer domain quantized by q draws the multiples of q inside
// [lower, upper], as Ray's qrandint and qlograndint do (Ray rounds each draw
// to a multiple of q; tunerun keeps the rounded values inside the bounds):
// qlograndint(1, 10, 2) draws from {2, 4, ..., 10}. At least two multiples
// must lie inside, else the domain is one constant.
std::pair<int64_t, int64_t> multiples_within(const char* name, int64_t lower, int64_t upper,
                                             int64_t q) {
  if (q < 1) throw ConfigError(fmt::format("{} needs q >= 1, got q = {}", name, q));
  auto floor_div = [](int64_t a, int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
  };
  const int64_t lo = -floor_div(-lower, q) * q;  // the least multiple >= lower
  const int64_t hi = floor_div(upper, q) * q;    // the greatest multiple <= upper
  if (lo >= hi) {
    throw ConfigError(fmt::format(
        "{}({}, {}, {}) has {} multiple of {} in [{}, {}]: widen the bounds or use a constant",
        name, lower, upper, q, lo == hi ? "only one" : "no", q, lower, upper));
  }
  return {lo, hi};
}

// Ray's check: both bounds are (close to) multiples of q.
void check_divides(const char* name, double lower, double upper, double q) {
  if (!(q > 0) || !std::isfinite(q)) {
    throw ConfigError(fmt::format("{} needs q > 0, got q = {}", name, q));
  }
  auto multiple = [q](double v) {
    const double k = v / q;
    return std::abs(k - std::round(k)) <= 1e-9 * std::max(1.0, std::abs(k));
  };
  if (!multiple(lower) || !multiple(upper)) {
    throw ConfigError(
        fmt::format("{} needs bounds that are multiples of q, got [{}, {}] with q = {}", name,
                    lower, upper, q));
  }
}

double round_to(double value, double q) { return std::round(value / q) * q; }

double clamp(double value, double lower, double upper) {
  return value < lower ? lower : (value > upper ? upper : value);
}

}  // namespace

Domain uniform(double lower, double upper) {
  check_finite("uniform", lower, upper);
  if (!(lower < upper)) {
    throw ConfigError(fmt::format("uniform needs lower < upper, got [{}, {}]", lower, upper));
  }
  if (!std::isfinite(upper - lower)) {
    throw ConfigError(fmt::format("uniform range [{}, {}] is too wide for a double", lower, upper));
  }
  Domain d(Domain::Kind::kUniform);
  d.lower_ = lower;
  d.upper_ = upper;
  return d;
}

Domain quniform(double lower, double upper, double q) {
  Domain d = uniform(lower, upper);
  check_divides("quniform", lower, upper, q);
  d.kind_ = Domain::Kind::kQUniform;
  d.q_ = q;
  return d;
}

Domain loguniform(double lower, double upper) {
  check_finite("loguniform", lower, upper);
  if (!(0 < lower && lower < upper)) {
    throw ConfigError(
        fmt::format("loguniform needs 0 < lower < upper, got [{}, {}]", lower, upper));
  }
  Domain d(Domain::Kind::kLogUniform);
  d.lower_ = lower;
  d.upper_ = upper;
  return d;
}

Domain qloguniform(double lower, double upper, double q) {
  check_finite("qloguniform", lower, upper);
  if (!(0 < lower && lower < upper)) {
    throw ConfigError(
        fmt::format("qloguniform needs 0 < lower < upper, got [{}, {}]", lower, upper));
  }
  check_divides("qloguniform", lower, upper, q);
  Domain d = loguniform(lower, upper);
  d.kind_ = Domain::Kind::kQLogUniform;
  d.q_ = q;
  return d;
}

Domain randn(double mean, double sd) {
  if (!std::isfinite(mean) || !std::isfinite(sd) || !(sd > 0)) {
    throw ConfigError(fmt::format("randn needs a finite mean and sd > 0, got ({}, {})", mean, sd));
  }
  Domain d(Domain::Kind::kRandn);
  d.lower_ = -INFINITY;
  d.upper_ = INFINITY;
  d.mean_ = mean;
  d.sd_ = sd;
  return d;
}

Domain qrandn(double mean, double sd, double q) {
  Domain d = randn(mean, sd);
  if (!(q > 0) || !std::isfinite(q)) {
    throw ConfigError(fmt::format("qrandn needs q > 0, got q = {}", q));
  }
  d.kind_ = Domain::Kind::kQRandn;
  d.q_ = q;
  return d;
}

Domain randint(int64_t lower, int64_t upper) {
  check_int_bounds("randint", lower, upper, -kMaxExactInt);
  Domain d(Domain::Kind::kRandInt);
  d.lower_ = static_cast<double>(lower);
  d.upper_ = static_cast<double>(upper);
  return d;
}

Domain qrandint(int64_t lower, int64_t upper, int64_t q) {
  check_int_bounds("qrandint", lower, upper, -kMaxExactInt);
  const auto [lo, hi] = multiples_within("qrandint", lower, upper, q);
  Domain d = randint(lo, hi);
  d.kind_ = Domain::Kind::kQRandInt;
  d.q_ = static_cast<double>(q);
  return d;
}

Domain lograndint(int64_t lower, int64_t upper) {
  check_int_bounds("lograndint", lower, upper, 1);
  Domain d = randint(lower, upper);
  d.kind_ = Domain::Kind::kLogRandInt;
  return d;
}

Domain qlograndint(int64_t lower, int64_t upper, int64_t q) {
  check_int_bounds("qlograndint", lower, upper, 1);
  const auto [lo, hi] = multiples_within("qlograndint", lower, upper, q);
  Domain d = randint(lo, hi);
  d.kind_ = Domain::Kind::kQLogRandInt;
  d.q_ = static_cast<double>(q);
  return d;
}

Domain choice(std::vector<Json> values) {
  if (values.empty()) throw ConfigError("choice needs at least one value, got []");
  Domain d(Domain::Kind::kChoice);
  d.values_ = std::move(values);
  return d;
}

Domain grid_search(std::vector<Json> values) {
  if (values.empty()) throw ConfigError("grid_search needs at least one value, got []");
  Domain d(Domain::Kind::kGridSearch);
  d.values_ = std::move(values);
  return d;
}

Domain sample_from(ConditionalFn fn, std::string description) {
  if (!fn) throw ConfigError("sample_from needs a function, got an empty one");
  Domain d(Domain::Kind::kSampleFrom);
  d.fn_ = std::make_shared<const ConditionalFn>(std::move(fn));
  d.description_ = std::move(description);
  return d;
}

bool Domain::is_integer() const {
  return kind_ == Kind::kRandInt || kind_ == Kind::kQRandInt || kind_ == Kind::kLogRandInt ||
         kind_ == Kind::kQLogRandInt;
}

bool Domain::is_log() const {
  return kind_ == Kind::kLogUniform || kind_ == Kind::kQLogUniform || kind_ == Kind::kLogRandInt ||
         kind_ == Kind::kQLogRandInt;
}

int64_t Domain::min_int() const { return static_cast<int64_t>(lower_); }

int64_t Domain::max_int() const {
  const bool inclusive = kind_ == Kind::kQRandInt || kind_ == Kind::kQLogRandInt;
  return static_cast<int64_t>(upper_) - (inclusive ? 0 : 1);
}

Json Domain::sample(Rng& rng) const {
  switch (kind_) {
    case Kind::kUniform:
    case Kind::kQUniform: {
      const double u = unit(rng);
      double value = lower_ + u * (upper_ - lower_);
      if (kind_ == Kind::kQUniform) return clamp(round_to(value, q_), lower_, upper_);
      // Rounding can land on upper_ for ranges wide relative to their ends.
      return value < upper_ ? value : std::nextafter(upper_, lower_);
    }
    case Kind::kLogUniform:
    case Kind::kQLogUniform: {
      const double u = unit(rng);
      const double log_lower = std::log(lower_);
      double value = std::exp(log_lower + u * (std::log(upper_) - log_lower));
      if (kind_ == Kind::kQLogUniform) return clamp(round_to(value, q_), lower_, upper_);
      if (value < lower_) value = lower_;
      if (value >= upper_) value = std::nextafter(upper_, lower_);
      return value;
    }
    case Kind::kRandn:
      return mean_ + sd_ * standard_normal(rng);
    case Kind::kQRandn:
      return round_to(mean_ + sd_ * standard_normal(rng), q_);
    case Kind::kRandInt: {
      const auto lower = static_cast<int64_t>(lower_);
      const auto span = static_cast<size_t>(static_cast<int64_t>(upper_) - lower);
      return lower + static_cast<int64_t>(scaled_index(unit(rng), span));
    }
    case Kind::kQRandInt: {
      // Uniform over the multiples of q in [lower, upper].
      const auto q = static_cast<int64_t>(q_);
      const int64_t first = min_int() / q;
      const auto count = static_cast<size_t>(max_int() / q - first + 1);
      return (first + static_cast<int64_t>(scaled_index(unit(rng), count))) * q;
    }
    case Kind::kLogRandInt:
    case Kind::kQLogRandInt: {
      // Ray: floor of a log-uniform float in [lower, max + 1), then rounded to q.
      const double log_lower = std::log(lower_);
      const double log_upper = std::log(static_cast<double>(max_int()) + 1.0);
      const double value = std::floor(std::exp(log_lower + unit(rng) * (log_upper - log_lower)));
      return snap(value);
    }
    case Kind::kChoice:
      return values_[scaled_index(unit(rng), values_.size())];
    case Kind::kGridSearch:
      throw Error("grid_search " + Json(values_).dump() +
                  " is expanded into grid cells, not sampled");
    case Kind::kSampleFrom:
      break;
  }
  throw Error(description_ + " is computed from the config, not sampled");
}

Json Domain::snap(double value) const {
  switch (kind_) {
    case Kind::kUniform:
    case Kind::kLogUniform:
      return clamp(value, lower_, std::nextafter(upper_, lower_));
    case Kind::kQUniform:
    case Kind::kQLogUniform:
      return clamp(round_to(value, q_), lower_, upper_);
    case Kind::kRandn:
      return value;
    case Kind::kQRandn:
      return round_to(value, q_);
    case Kind::kRandInt:
    case Kind::kQRandInt:
    case Kind::kLogRandInt:
    case Kind::kQLogRandInt: {
      const double step = q_ > 0 ? q_ : 1.0;
      const double snapped = clamp(round_to(value, step), static_cast<double>(min_int()),
                                   static_cast<double>(max_int()));
      return static_cast<int64_t>(snapped);
    }
    default:
      break;
  }
  throw Error(describe() + " is not numeric; it cannot snap a number");
}

Json Domain::evaluate(const Json& config) const {
  if (!fn_) throw Error(describe() + " is not a sample_from domain");
  return (*fn_)(config);
}

std::string Domain::describe() const {
  // Integer kinds keep their bounds within +-2^53; clamping keeps the cast
  // defined for the float kinds, whose bounds may be anything finite.
  auto as_int = [](double v) { return static_cast<int64_t>(std::clamp(v, -9.0e18, 9.0e18)); };
  const int64_t lo = as_int(lower_);
  const int64_t hi = as_int(upper_);
  switch (kind_) {
    case Kind::kUniform:
      return fmt::format("uniform({}, {})", lower_, upper_);
    case Kind::kQUniform:
      return fmt::format("quniform({}, {}, {})", lower_, upper_, q_);
    case Kind::kLogUniform:
      return fmt::format("loguniform({}, {})", lower_, upper_);
    case Kind::kQLogUniform:
      return fmt::format("qloguniform({}, {}, {})", lower_, upper_, q_);
    case Kind::kRandn:
      return fmt::format("randn({}, {})", mean_, sd_);
    case Kind::kQRandn:
      return fmt::format("qrandn({}, {}, {})", mean_, sd_, q_);
    case Kind::kRandInt:
      return fmt::format("randint({}, {})", lo, hi);
    case Kind::kQRandInt:
      return fmt::format("qrandint({}, {}, {})", lo, hi, static_cast<int64_t>(q_));
    case Kind::kLogRandInt:
      return fmt::format("lograndint({}, {})", lo, hi);
    case Kind::kQLogRandInt:
      return fmt::format("qlograndint({}, {}, {})", lo, hi, static_cast<int64_t>(q_));
    case Kind::kChoice:
      return "choice(" + Json(values_).dump() + ")";
    case Kind::kGridSearch:
      return "grid_search(" + Json(values_).dump() + ")";
    case Kind::kSampleFrom:
      return description_;
  }
  return "unknown domain";
}

}  // namespace tune
