#include "search/internal/parzen.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "search/internal/joint_kernels.h"

namespace tune::search::detail {
namespace {

std::vector<Dimension> unit_dims(size_t n) {
  ParamSpace space;
  for (size_t d = 0; d < n; ++d) space.set("x" + std::to_string(d), uniform(0, 1));
  return SpaceEncoding(space).dims();
}

TEST_CASE("parzen: log densities are Optuna 3.1's, univariate and multivariate") {
  // Reference values from optuna.samplers._tpe.parzen_estimator (3.1.0) on
  // the same points, prior_weight 1, default weights.
  const std::vector<std::vector<double>> points = {
      {0.1, 0.4}, {0.15, 0.95}, {0.7, 0.7}, {0.95, 0.15}, {0.4, 0.1}};
  std::vector<const double*> ptr;
  for (const auto& p : points) ptr.push_back(p.data());
  const std::vector<std::vector<double>> queries = {{0.12, 0.3}, {0.5, 0.02}, {0.99, 0.6}};

  const ParzenEstimator uni(unit_dims(2), ptr, tpe_weights(5), 1.0, Bandwidth::kNeighbour,
                            KernelScale::kOptuna);
  const double uni_expected[] = {-0.96004583, -1.04207815, -1.1695984};
  for (size_t q = 0; q < queries.size(); ++q) {
    CHECK(uni.log_pdf_dim(0, queries[q][0]) == doctest::Approx(uni_expected[q]).epsilon(1e-8));
  }

  const ParzenEstimator joint(unit_dims(2), ptr, tpe_weights(5), 1.0, Bandwidth::kScott,
                              KernelScale::kOptuna);
  std::vector<double> out;
  joint.log_pdf_joint(queries, out);
  const double joint_expected[] = {-1.62695615, -1.67675446, -1.80780788};
  for (size_t q = 0; q < queries.size(); ++q) {
    CHECK(out[q] == doctest::Approx(joint_expected[q]).epsilon(1e-8));
  }
}

TEST_CASE("parzen: SortedKernels agrees with ParzenEstimator") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (size_t n : {0, 1, 2, 3, 30, 400}) {
    // Clustered near 0 (kernels at the edge, sigmas from the clip up).
    std::vector<double> values(n);
    for (double& v : values) v = u(rng) * u(rng) * u(rng);
    std::vector<const double*> ptr;
    for (const double& v : values) ptr.push_back(&v);
    const std::vector<double> weights = tpe_weights(n);
    for (double prior_weight : {1.0, 0.25}) {
      const ParzenEstimator reference(unit_dims(1), ptr, weights, prior_weight,
                                      Bandwidth::kNeighbour, KernelScale::kOptuna);
      std::vector<size_t> order(n);
      for (size_t i = 0; i < n; ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return values[a] < values[b]; });
      std::vector<double> mu, w;
      for (size_t i : order) {
        mu.push_back(values[i]);
        w.push_back(weights[i]);
      }
      SortedKernels fast;
      fast.build(mu, w, prior_weight);
      for (double x : {0.0, 1e-4, 0.01, 0.05, 0.2, 0.5, 0.77, 1.0}) {
        CHECK(fast.log_pdf(x) == doctest::Approx(reference.log_pdf_dim(0, x)).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("parzen: JointKernels agrees with ParzenEstimator in joint mode") {
  // Two numeric dims (one clustered at an edge), a categorical one and an
  // integer one (ties, and the lattice floor of kDensity), with ramped
  // weights, both bandwidth rules and both kernel scales.
  ParamSpace space;
  space.set("a", uniform(0, 1));
  space.set("b", uniform(0, 1));
  space.set("c", choice({"x", "y", "z"}));
  space.set("k", randint(0, 5));
  const std::vector<Dimension> dims = SpaceEncoding(space).dims();
  REQUIRE(dims[2].categorical());
  REQUIRE(dims[3].lattice_size == 5);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  for (size_t n : {1, 2, 3, 7, 40, 300}) {
    std::vector<std::vector<double>> points(n);
    for (auto& p : points) {
      p = {u(rng), u(rng) * u(rng) * u(rng), std::floor(3 * u(rng)),
           (std::floor(5 * u(rng)) + 0.5) / 5};
    }
    std::vector<const double*> ptr;
    for (const auto& p : points) ptr.push_back(p.data());
    const std::vector<double> weights = tpe_weights(n);
    std::vector<std::vector<double>> queries = {
        {0.5, 0.0, 0, 0.1}, {0.01, 0.99, 2, 0.5}, {1.0, 1e-4, 1, 0.9}};
    for (size_t q = 0; q < 5; ++q) queries.push_back(points[q % n]);  // on a kernel
    for (auto [bandwidth, scale] : {std::pair{Bandwidth::kNeighbour, KernelScale::kDensity},
                                    std::pair{Bandwidth::kNeighbour, KernelScale::kOptuna},
                                    std::pair{Bandwidth::kScott, KernelScale::kOptuna},
                                    std::pair{Bandwidth::kScott, KernelScale::kDensity}}) {
      for (double prior_weight : {1.0, 0.25}) {
        const ParzenEstimator reference(dims, ptr, weights, prior_weight, bandwidth, scale);
        // Columns in the order JointKernels wants: numeric ones by value.
        std::vector<std::vector<JointKernels::Coordinate>> columns(dims.size());
        for (size_t d = 0; d < dims.size(); ++d) {
          for (uint32_t i = 0; i < n; ++i) columns[d].push_back({points[i][d], i});
          std::stable_sort(columns[d].begin(), columns[d].end(),
                           [](const auto& a, const auto& b) { return a.value < b.value; });
        }
        JointKernels fast;
        fast.build(dims, weights, prior_weight, bandwidth, scale, columns);
        std::vector<double> expected, got;
        reference.log_pdf_joint(queries, expected);
        fast.log_pdf(queries, got);
        for (size_t q = 0; q < queries.size(); ++q) {
          CHECK(got[q] == doctest::Approx(expected[q]).epsilon(1e-12));
        }
      }
    }
  }
}

TEST_CASE("parzen: the inlined exp is accurate to a few ulp") {
  double worst = 0;
  for (double t = -700; t <= 0; t += 0.0137) {
    worst = std::max(worst, std::abs(fast_exp_for_test(t) / std::exp(t) - 1));
  }
  CHECK(worst < 1e-15);
  CHECK(fast_exp_for_test(0) == 1.0);
}

}  // namespace
}  // namespace tune::search::detail
