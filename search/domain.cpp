#include "search/domain.h"

#include <fmt/format.h>

#include <cmath>

#include "core/errors.h"

namespace tune {
namespace {

// Integers beyond 2^53 do not survive the trip through Domain's double bounds.
constexpr int64_t kMaxExactInt = int64_t{1} << 53;

// A uniform double in [0, 1) from the top 53 bits of one draw. Written out
// because std::uniform_real_distribution differs between standard libraries.
double unit(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

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

}  // namespace

Domain::Domain(Kind kind, double lower, double upper, std::vector<Json> values)
    : kind_(kind), lower_(lower), upper_(upper), values_(std::move(values)) {}

Domain uniform(double lower, double upper) {
  check_finite("uniform", lower, upper);
  if (!(lower < upper)) {
    throw ConfigError(fmt::format("uniform needs lower < upper, got [{}, {}]", lower, upper));
  }
  if (!std::isfinite(upper - lower)) {
    throw ConfigError(fmt::format("uniform range [{}, {}] is too wide for a double", lower, upper));
  }
  return Domain(Domain::Kind::kUniform, lower, upper, {});
}

Domain loguniform(double lower, double upper) {
  check_finite("loguniform", lower, upper);
  if (!(0 < lower && lower < upper)) {
    throw ConfigError(
        fmt::format("loguniform needs 0 < lower < upper, got [{}, {}]", lower, upper));
  }
  return Domain(Domain::Kind::kLogUniform, lower, upper, {});
}

Domain randint(int64_t lower, int64_t upper) {
  if (!(lower < upper)) {
    throw ConfigError(fmt::format("randint needs lower < upper, got [{}, {}]", lower, upper));
  }
  if (lower < -kMaxExactInt || upper > kMaxExactInt) {
    throw ConfigError(
        fmt::format("randint bounds must lie within +-2^53, got [{}, {}]", lower, upper));
  }
  return Domain(Domain::Kind::kRandInt, static_cast<double>(lower), static_cast<double>(upper), {});
}

Domain choice(std::vector<Json> values) {
  if (values.empty()) throw ConfigError("choice needs at least one value, got []");
  return Domain(Domain::Kind::kChoice, 0, 0, std::move(values));
}

Domain grid_search(std::vector<Json> values) {
  if (values.empty()) throw ConfigError("grid_search needs at least one value, got []");
  return Domain(Domain::Kind::kGridSearch, 0, 0, std::move(values));
}

Json Domain::sample(Rng& rng) const {
  const double u = unit(rng);
  switch (kind_) {
    case Kind::kUniform: {
      double value = lower_ + u * (upper_ - lower_);
      // Rounding can land on upper_ for ranges wide relative to their ends.
      return value < upper_ ? value : std::nextafter(upper_, lower_);
    }
    case Kind::kLogUniform: {
      const double log_lower = std::log(lower_);
      double value = std::exp(log_lower + u * (std::log(upper_) - log_lower));
      if (value < lower_) value = lower_;
      if (value >= upper_) value = std::nextafter(upper_, lower_);
      return value;
    }
    case Kind::kRandInt: {
      const auto lower = static_cast<int64_t>(lower_);
      const auto span = static_cast<size_t>(static_cast<int64_t>(upper_) - lower);
      return lower + static_cast<int64_t>(scaled_index(u, span));
    }
    case Kind::kChoice:
      return values_[scaled_index(u, values_.size())];
    case Kind::kGridSearch:
      break;
  }
  throw Error("grid_search " + Json(values_).dump() + " is expanded into grid cells, not sampled");
}

std::string Domain::describe() const {
  switch (kind_) {
    case Kind::kUniform:
      return fmt::format("uniform({}, {})", lower_, upper_);
    case Kind::kLogUniform:
      return fmt::format("loguniform({}, {})", lower_, upper_);
    case Kind::kRandInt:
      return fmt::format("randint({}, {})", static_cast<int64_t>(lower_),
                         static_cast<int64_t>(upper_));
    case Kind::kChoice:
      return "choice(" + Json(values_).dump() + ")";
    case Kind::kGridSearch:
      return "grid_search(" + Json(values_).dump() + ")";
  }
  return "unknown domain";
}

}  // namespace tune
