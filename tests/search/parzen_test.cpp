#include "search/internal/parzen.h"

#include <doctest/doctest.h>

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

  const ParzenEstimator uni(unit_dims(2), ptr, 1.0, false);
  const double uni_expected[] = {-0.96004583, -1.04207815, -1.1695984};
  for (size_t q = 0; q < queries.size(); ++q) {
    CHECK(uni.log_pdf_dim(0, queries[q][0]) == doctest::Approx(uni_expected[q]).epsilon(1e-8));
  }

  const ParzenEstimator joint(unit_dims(2), ptr, 1.0, true);
  std::vector<double> out;
  joint.log_pdf_joint(queries, out);
  const double joint_expected[] = {-1.62695615, -1.67675446, -1.80780788};
  for (size_t q = 0; q < queries.size(); ++q) {
    CHECK(out[q] == doctest::Approx(joint_expected[q]).epsilon(1e-8));
  }
}

}  // namespace
}  // namespace tune::search::detail
