#include "search/internal/scalarisation.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

namespace tune::search::detail {
namespace {

// ParEGO's rho: the sum's share beside the largest weighted objective.
constexpr double kChebyshevRho = 0.05;

}  // namespace

std::vector<double> chebyshev_scalarisation(const std::vector<std::vector<double>>& losses,
                                            Rng& rng) {
  const size_t m = losses.empty() ? 0 : losses.front().size();
  // Weights drawn uniformly on the simplex (normalised exponential draws).
  std::vector<double> w(m);
  std::exponential_distribution<double> exponential(1.0);
  for (double& wj : w) wj = exponential(rng);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& wj : w) wj /= total;
  std::vector<double> lo(m, std::numeric_limits<double>::infinity()), hi(m, -lo[0]);
  for (const auto& row : losses) {
    for (size_t j = 0; j < m; ++j) {
      lo[j] = std::min(lo[j], row[j]);
      hi[j] = std::max(hi[j], row[j]);
    }
  }
  std::vector<double> out(losses.size());
  for (size_t i = 0; i < losses.size(); ++i) {
    double largest = 0, sum = 0;
    for (size_t j = 0; j < m; ++j) {
      const double f = hi[j] > lo[j] ? (losses[i][j] - lo[j]) / (hi[j] - lo[j]) : 0.0;
      largest = std::max(largest, w[j] * f);
      sum += w[j] * f;
    }
    out[i] = largest + kChebyshevRho * sum;
  }
  return out;
}

void penalise_infeasible(std::vector<double>& values, const std::vector<double>& violations) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, worst_violation = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (violations[i] > 0) {
      worst_violation = std::max(worst_violation, violations[i]);
    } else {
      lo = std::min(lo, values[i]);
      hi = std::max(hi, values[i]);
    }
  }
  if (worst_violation == 0) return;
  if (!(lo <= hi)) lo = hi = 0;  // none feasible yet: rank by violation alone
  const double span = hi > lo ? hi - lo : 1.0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (violations[i] > 0) values[i] = hi + span * (1 + violations[i] / worst_violation);
  }
}

}  // namespace tune::search::detail
