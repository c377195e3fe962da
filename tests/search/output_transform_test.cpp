#include "search/internal/output_transform.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "search/internal/gp.h"
#include "search/internal/normal.h"
#include "tests/search/searcher_test_util.h"

namespace tune::search {
namespace {

using detail::OutputTransform;
using detail::transform_outputs;

// 60 losses log-uniform over 1e-3..1e6, in a scrambled order.
std::vector<double> spanning_losses() {
  std::vector<double> y(60);
  for (size_t i = 0; i < y.size(); ++i) {
    const double u = static_cast<double>((i * 37) % 60) / 59.0;
    y[i] = std::pow(10.0, -3 + 9 * u);
  }
  return y;
}

// The spread of the best `k` targets over the spread of all of them.
double good_share(std::vector<double> v, int k) {
  std::sort(v.begin(), v.end());
  return (v[k - 1] - v[0]) / (v.back() - v[0]);
}

TEST_CASE("output transforms: losses spanning 1e-3..1e6 keep the good ones apart") {
  const std::vector<double> y = spanning_losses();
  const std::vector<double> plain = transform_outputs(y, OutputTransform::kStandardise);
  for (OutputTransform kind : {OutputTransform::kPower, OutputTransform::kRank}) {
    CAPTURE(static_cast<int>(kind));
    const std::vector<double> t = transform_outputs(y, kind);
    REQUIRE(t.size() == y.size());
    // Monotone: the order of the losses is the order of the targets.
    bool monotone = true;
    double sum = 0, squares = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      REQUIRE(std::isfinite(t[i]));
      sum += t[i];
      squares += t[i] * t[i];
      for (size_t j = 0; j < y.size(); ++j) monotone &= !(y[i] < y[j]) || t[i] < t[j];
    }
    CHECK(monotone);
    const double mean = sum / static_cast<double>(t.size());
    CHECK(std::abs(mean) < 0.05);
    CHECK(std::abs(std::sqrt(squares / static_cast<double>(t.size()) - mean * mean) - 1) < 0.1);
    // Standardised, the best third (1e-3..1e0) is one point to the GP; here
    // it spans a good part of the range.
    CHECK(good_share(plain, 20) < 1e-5);
    CHECK(good_share(t, 20) > 0.2);
  }
  // Power on log-uniform losses is near a log: evenly spaced targets.
  const std::vector<double> power = transform_outputs(y, OutputTransform::kPower);
  CHECK(good_share(power, 30) == doctest::Approx(0.5).epsilon(0.1));
}

TEST_CASE("output transforms: Gaussian-looking losses stay near standardised") {
  std::vector<double> y(50);
  for (size_t i = 0; i < y.size(); ++i) {
    y[i] = 3 + detail::norm_ppf((static_cast<double>((i * 13) % 50) + 0.5) / 50.0);
  }
  const std::vector<double> plain = transform_outputs(y, OutputTransform::kStandardise);
  const std::vector<double> power = transform_outputs(y, OutputTransform::kPower);
  double gap = 0;
  for (size_t i = 0; i < y.size(); ++i) gap = std::max(gap, std::abs(plain[i] - power[i]));
  CHECK(gap < 0.25);
  CHECK(transform_outputs(std::vector<double>(5, 2.0), OutputTransform::kPower) ==
        std::vector<double>(5, 0.0));
}

TEST_CASE("output transforms: the power family at a given lambda, with its log Jacobian") {
  const std::vector<double> y = spanning_losses();
  // lambda 1 is standardising; its slope is 1 / sd everywhere.
  const detail::PowerTargets one = detail::power_targets(y, 1.0);
  const std::vector<double> plain = transform_outputs(y, OutputTransform::kStandardise);
  double mean = 0, squares = 0;
  for (double v : y) mean += v / static_cast<double>(y.size());
  for (double v : y) squares += (v - mean) * (v - mean) / static_cast<double>(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    CHECK(one.targets[i] == doctest::Approx(plain[i]));
    CHECK(one.log_slope[i] == doctest::Approx(-0.5 * std::log(squares)));
  }
  // lambda 0 is a log: t = (log s - m) / sd with s = y - min + shift, and
  // the slope 1 / (s sd). The slopes at two losses give s and sd, and those
  // must give the targets' difference.
  const detail::PowerTargets log = detail::power_targets(y, 0.0);
  const size_t a = 3, b = 17;  // any two distinct losses
  REQUIRE(y[a] != y[b]);
  const double sd = (std::exp(-log.log_slope[a]) - std::exp(-log.log_slope[b])) / (y[a] - y[b]);
  CHECK(sd > 0);
  CHECK(log.targets[a] - log.targets[b] ==
        doctest::Approx((log.log_slope[b] - log.log_slope[a]) / sd));
  // Standardised and monotone at any lambda.
  for (double lambda : {-0.5, 0.0, 0.5}) {
    const detail::PowerTargets p = detail::power_targets(y, lambda);
    double sum = 0, sum2 = 0;
    bool monotone = true;
    for (size_t i = 0; i < y.size(); ++i) {
      sum += p.targets[i];
      sum2 += p.targets[i] * p.targets[i];
      for (size_t j = 0; j < y.size(); ++j)
        monotone &= !(y[i] < y[j]) || p.targets[i] < p.targets[j];
    }
    CHECK(monotone);
    CHECK(sum / static_cast<double>(y.size()) == doctest::Approx(0).epsilon(1e-9));
    CHECK(sum2 / static_cast<double>(y.size()) == doctest::Approx(1));
  }
}

TEST_CASE("gp: a curved valley spanning orders of magnitude (Rosenbrock)") {
  const ParamSpace space{{"x", uniform(-2, 2)}, {"y", uniform(-1, 3)}};
  const auto rosenbrock = [](const Json& c) {
    const double x = c["x"].get<double>(), y = c["y"].get<double>();
    return 100 * (y - x * x) * (y - x * x) + (1 - x) * (1 - x);
  };
  // Median over seeds of the best after 40 trials; the values span 1e-3..4e3.
  std::vector<double> best;
  for (uint64_t seed = 0; seed < 3; ++seed) {
    GpOptions o;
    o.base.num_samples = 40;
    o.base.seed = seed;
    o.n_candidates = 300;
    GpSearcher gp(o);
    gp.set_search_properties("loss", Mode::kMin, space);
    best.push_back(testing::best_of(testing::run_sequential(gp, 40, rosenbrock), rosenbrock));
  }
  std::sort(best.begin(), best.end());
  CHECK(best[1] < 0.5);
}

}  // namespace
}  // namespace tune::search
