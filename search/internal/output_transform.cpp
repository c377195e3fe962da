#include "search/internal/output_transform.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "search/internal/normal.h"

namespace tune::search::detail {
namespace {

Eigen::VectorXd standardise(const Eigen::VectorXd& y) {
  const double mean = y.mean();
  const double sd = std::sqrt((y.array() - mean).square().mean());
  return (y.array() - mean) / (sd > 1e-300 ? sd : 1.0);
}

double box_cox(double s, double lambda) {
  return std::abs(lambda) < 1e-9 ? std::log(s) : (std::pow(s, lambda) - 1) / lambda;
}

// The lambda in [-2, 2] (steps of 0.05) under which Box-Cox of positive `s`
// has the largest normal log-likelihood.
double best_lambda(const Eigen::VectorXd& s) {
  const auto n = static_cast<double>(s.size());
  const double sum_log = s.array().log().sum();
  Eigen::VectorXd t(s.size());
  double best_lambda = 1, best = -std::numeric_limits<double>::infinity();
  for (int step = -40; step <= 40; ++step) {
    const double lambda = 0.05 * step;
    for (Eigen::Index i = 0; i < s.size(); ++i) t[i] = box_cox(s[i], lambda);
    const double var = (t.array() - t.mean()).square().mean();
    if (!(var > 0) || !std::isfinite(var)) continue;
    const double log_likelihood = -0.5 * n * std::log(var) + (lambda - 1) * sum_log;
    if (log_likelihood > best) best = log_likelihood, best_lambda = lambda;
  }
  return best_lambda;
}

double quantile(const std::vector<double>& sorted, double q) {
  return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1))];
}

// The losses moved to be positive for Box-Cox: y - min + shift. The shift
// keeps the best value finite under a log: the distance from the best to a
// low quantile, so the good values stay apart from one another.
Eigen::VectorXd shifted(const Eigen::VectorXd& y, const std::vector<double>& sorted) {
  const double low = sorted.front();
  double shift = 0;
  for (double q : {0.1, 0.25, 0.5, 1.0}) {
    shift = quantile(sorted, q) - low;
    if (shift > 0) break;
  }
  return (y.array() - low + (shift > 0 ? shift : 1.0)).matrix();
}

std::vector<double> sorted_copy(const Eigen::VectorXd& y) {
  std::vector<double> sorted(y.data(), y.data() + y.size());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

Eigen::VectorXd power(const Eigen::VectorXd& s, double lambda) {
  Eigen::VectorXd t(s.size());
  for (Eigen::Index i = 0; i < s.size(); ++i) t[i] = box_cox(s[i], lambda);
  return t;
}

// The copula transform. Ties share their mean rank, so equal losses stay equal.
Eigen::VectorXd rank(const Eigen::VectorXd& y) {
  const auto n = y.size();
  const std::vector<double> sorted = sorted_copy(y);
  if (n < 2 || sorted.front() == sorted.back()) return Eigen::VectorXd::Zero(n);
  std::vector<Eigen::Index> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return y[a] < y[b]; });
  Eigen::VectorXd out(n);
  for (Eigen::Index i = 0; i < n;) {
    Eigen::Index j = i;
    while (j + 1 < n && y[order[j + 1]] == y[order[i]]) ++j;
    const double mean_rank = 0.5 * static_cast<double>(i + j);
    const double z = norm_ppf((mean_rank + 0.5) / static_cast<double>(n));
    for (Eigen::Index k = i; k <= j; ++k) out[order[k]] = z;
    i = j + 1;
  }
  return out;
}

}  // namespace

std::vector<double> transform_outputs(const std::vector<double>& y, OutputTransform kind) {
  if (kind == OutputTransform::kPower) return power_targets(y, normal_lambda(y)).targets;
  const Eigen::Map<const Eigen::VectorXd> v(y.data(), static_cast<Eigen::Index>(y.size()));
  const Eigen::VectorXd t = kind == OutputTransform::kRank ? rank(v) : standardise(v);
  return {t.data(), t.data() + t.size()};
}

double normal_lambda(const std::vector<double>& y) {
  const Eigen::Map<const Eigen::VectorXd> v(y.data(), static_cast<Eigen::Index>(y.size()));
  const std::vector<double> sorted = sorted_copy(v);
  if (sorted.size() < 2 || sorted.front() == sorted.back()) return 1;
  return best_lambda(shifted(v, sorted));
}

PowerTargets power_targets(const std::vector<double>& y, double lambda) {
  const auto n = static_cast<Eigen::Index>(y.size());
  const Eigen::Map<const Eigen::VectorXd> v(y.data(), n);
  const std::vector<double> sorted = sorted_copy(v);
  PowerTargets out{std::vector<double>(y.size(), 0.0), std::vector<double>(y.size(), 0.0)};
  if (n < 2 || sorted.front() == sorted.back()) return out;
  const Eigen::VectorXd s = shifted(v, sorted);
  const Eigen::VectorXd t = power(s, lambda);
  const double mean = t.mean();
  const double sd = std::sqrt((t.array() - mean).square().mean());
  for (Eigen::Index i = 0; i < n; ++i) {
    out.targets[i] = (t[i] - mean) / sd;
    out.log_slope[i] = (lambda - 1) * std::log(s[i]) - std::log(sd);
  }
  return out;
}

}  // namespace tune::search::detail
