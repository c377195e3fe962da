#include "search/domain.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/errors.h"
#include "tests/search/config_error.h"

namespace tune {
namespace {

constexpr int kDraws = 20000;

std::vector<double> draw_doubles(const Domain& domain, Rng& rng) {
  std::vector<double> out;
  for (int i = 0; i < kDraws; ++i) {
    Json value = domain.sample(rng);
    REQUIRE(value.is_number_float());
    out.push_back(value.get<double>());
  }
  return out;
}

double median(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

TEST_CASE("uniform draws stay within lower (inclusive) and upper (exclusive) and spread out") {
  Rng rng(1);
  auto values = draw_doubles(uniform(-5, 5), rng);
  for (double v : values) CHECK((v >= -5 && v < 5));
  CHECK(*std::min_element(values.begin(), values.end()) < -4.9);
  CHECK(*std::max_element(values.begin(), values.end()) > 4.9);
  CHECK(std::abs(median(values)) < 0.2);
}

TEST_CASE("loguniform draws stay in bounds and are uniform in log space") {
  Rng rng(2);
  auto values = draw_doubles(loguniform(1e-4, 1e-1), rng);
  for (double v : values) CHECK((v >= 1e-4 && v < 1e-1));
  // Uniform in log space: the median is the geometric mean, 10^-2.5, far
  // below the arithmetic midpoint 0.05.
  const double geometric_mean = std::sqrt(1e-4 * 1e-1);
  CHECK(std::abs(std::log10(median(values)) - std::log10(geometric_mean)) < 0.05);
  const auto below_1e3 =
      std::count_if(values.begin(), values.end(), [](double v) { return v < 1e-3; });
  CHECK(std::abs(static_cast<double>(below_1e3) / kDraws - 1.0 / 3) < 0.02);
}

TEST_CASE("randint excludes upper and hits every value in range") {
  Rng rng(3);
  const Domain domain = randint(1, 4);
  std::set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    Json value = domain.sample(rng);
    REQUIRE(value.is_number_integer());
    seen.insert(value.get<int64_t>());
  }
  CHECK(seen == std::set<int64_t>{1, 2, 3});
}

TEST_CASE("randint handles negative ranges") {
  Rng rng(4);
  std::set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(randint(-2, 1).sample(rng).get<int64_t>());
  CHECK(seen == std::set<int64_t>{-2, -1, 0});
}

TEST_CASE("choice hits every value and keeps mixed types") {
  Rng rng(5);
  const std::vector<Json> values{32, "adam", 0.5, true, nullptr, Json{{"depth", 2}}};
  const Domain domain = choice(values);
  std::set<std::string> seen;
  for (int i = 0; i < 2000; ++i) seen.insert(domain.sample(rng).dump());
  std::set<std::string> expected;
  for (const Json& v : values) expected.insert(v.dump());
  CHECK(seen == expected);
}

TEST_CASE("the same seed gives the same draws") {
  Rng a(42), b(42), c(43);
  const Domain domain = uniform(0, 1);
  std::vector<double> from_a, from_b, from_c;
  for (int i = 0; i < 10; ++i) {
    from_a.push_back(domain.sample(a).get<double>());
    from_b.push_back(domain.sample(b).get<double>());
    from_c.push_back(domain.sample(c).get<double>());
  }
  CHECK(from_a == from_b);
  CHECK(from_a != from_c);
}

TEST_CASE("draws are computed from the raw 64-bit engine output") {
  // Pins the portable formula, so a seed means the same configs everywhere.
  Rng rng(7), reference(7);
  const double u = static_cast<double>(reference() >> 11) * 0x1.0p-53;
  CHECK(uniform(10, 20).sample(rng).get<double>() == 10 + u * 10);
}

TEST_CASE("invalid bounds throw ConfigError saying what is wrong") {
  CHECK(config_error([] { loguniform(0, 1); }) == "loguniform needs 0 < lower < upper, got [0, 1]");
  CHECK(config_error([] { loguniform(-1, 1); }) ==
        "loguniform needs 0 < lower < upper, got [-1, 1]");
  CHECK(config_error([] { uniform(5, 5); }) == "uniform needs lower < upper, got [5, 5]");
  CHECK(config_error([] { uniform(0, INFINITY); }) == "uniform needs finite bounds, got [0, inf]");
  CHECK(config_error([] { uniform(NAN, 1); }) == "uniform needs finite bounds, got [nan, 1]");
  CHECK(config_error([] { randint(4, 1); }) == "randint needs lower < upper, got [4, 1]");
  CHECK(config_error([] { choice({}); }) == "choice needs at least one value, got []");
  CHECK(config_error([] { grid_search({}); }) == "grid_search needs at least one value, got []");
}

TEST_CASE("a grid_search domain cannot be sampled") {
  Rng rng(0);
  CHECK_THROWS_AS(grid_search({1, 2}).sample(rng), Error);
}

TEST_CASE("describe prints the domain as a user would write it") {
  CHECK(uniform(-5, 5).describe() == "uniform(-5, 5)");
  CHECK(loguniform(1e-4, 0.1).describe() == "loguniform(0.0001, 0.1)");
  CHECK(randint(1, 4).describe() == "randint(1, 4)");
  CHECK(choice({32, 64}).describe() == "choice([32,64])");
  CHECK(grid_search({1, 2}).describe() == "grid_search([1,2])");
}

}  // namespace
}  // namespace tune
