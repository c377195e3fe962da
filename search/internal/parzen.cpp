#include "search/internal/parzen.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "search/internal/normal.h"

namespace tune::search::detail {
namespace {

constexpr double kPriorMu = 0.5;
constexpr double kPriorSigma = 1.0;  // the whole (normalised) range, as Optuna

// log(sum(exp(t))) over `t`, skipping terms too small to change the sum.
double log_sum_exp(const double* t, size_t n) {
  double max = -INFINITY;
  for (size_t i = 0; i < n; ++i) max = std::max(max, t[i]);
  if (!std::isfinite(max)) return max;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = t[i] - max;
    if (d > -40) sum += std::exp(d);
  }
  return max + std::log(sum);
}

// Neighbour-distance sigmas as Optuna 3.1's univariate estimator computes
// them: `mus` includes the prior mean; endpoints are 0 and 1, but the
// outermost sigmas use their inner neighbour (consider_endpoints=False).
std::vector<double> neighbour_sigmas(const std::vector<double>& mus, std::vector<size_t>& order) {
  const size_t n = mus.size();
  // Sorting (mean, index) pairs: contiguous, several times faster than an
  // index sort through a comparator at a thousand observations.
  std::vector<std::pair<double, size_t>> sorted_pairs(n);
  for (size_t i = 0; i < n; ++i) sorted_pairs[i] = {mus[i], i};
  std::sort(sorted_pairs.begin(), sorted_pairs.end());
  order.resize(n);
  std::vector<double> ext(n + 2);
  ext[0] = 0;
  ext[n + 1] = 1;
  for (size_t i = 0; i < n; ++i) {
    order[i] = sorted_pairs[i].second;
    ext[i + 1] = sorted_pairs[i].first;
  }
  std::vector<double> sorted(n);
  for (size_t i = 0; i < n; ++i) sorted[i] = std::max(ext[i + 1] - ext[i], ext[i + 2] - ext[i + 1]);
  if (n + 2 >= 4) {
    sorted[0] = ext[2] - ext[1];
    sorted[n - 1] = ext[n] - ext[n - 1];
  }
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) out[order[i]] = sorted[i];
  return out;
}

}  // namespace

std::vector<double> tpe_weights(size_t n) {
  constexpr size_t kFlat = 25;
  std::vector<double> w(n, 1.0);
  if (n < kFlat) return w;
  const size_t ramp = n - kFlat;  // linspace(1/n, 1, ramp)
  for (size_t i = 0; i < ramp; ++i) {
    const double start = 1.0 / static_cast<double>(n);
    w[i] = ramp == 1 ? start : start + (1 - start) * static_cast<double>(i) / (ramp - 1.0);
  }
  return w;
}

ParzenEstimator::ParzenEstimator(const std::vector<Dimension>& dims,
                                 const std::vector<const double*>& points, double prior_weight,
                                 bool multivariate) {
  const size_t n = points.size();
  const size_t k = n + 1;  // observations, then the prior
  std::vector<double> w = tpe_weights(n);
  w.push_back(prior_weight);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  double running = 0;
  for (double wi : w) {
    log_weights_.push_back(std::log(wi / total));
    running += wi / total;
    cumulative_.push_back(running);
  }

  const double multivariate_sigma = 0.2 * std::pow(std::max<double>(static_cast<double>(n), 1.0),
                                                   -1.0 / (static_cast<double>(dims.size()) + 4));
  for (size_t d = 0; d < dims.size(); ++d) {
    DimKernels kern;
    kern.categorical = dims[d].categorical();
    if (kern.categorical) {
      const size_t c = dims[d].num_choices();
      kern.num_choices = c;
      kern.log_p.assign(k * c, -std::log(static_cast<double>(c)));  // the prior row stays uniform
      const double floor = prior_weight / static_cast<double>(n + 1);
      const double row_total = floor * static_cast<double>(c) + 1;
      for (size_t i = 0; i < n; ++i) {
        const auto obs = static_cast<size_t>(points[i][d]);
        for (size_t j = 0; j < c; ++j) {
          kern.log_p[i * c + j] = std::log((floor + (j == obs ? 1.0 : 0.0)) / row_total);
        }
      }
      dims_.push_back(std::move(kern));
      continue;
    }
    for (size_t i = 0; i < n; ++i) kern.mu.push_back(points[i][d]);
    kern.mu.push_back(kPriorMu);
    std::vector<size_t> order;
    kern.inv_sigma.reserve(k);
    kern.log_norm.reserve(k);
    if (multivariate) {
      kern.sigma.assign(n, multivariate_sigma);
    } else {
      kern.sigma = neighbour_sigmas(kern.mu, order);
      kern.sigma.resize(n);
    }
    const double min_sigma = 1.0 / std::min(100.0, 1.0 + static_cast<double>(k));
    for (double& s : kern.sigma) s = std::clamp(s, min_sigma, 1.0);
    kern.sigma.push_back(kPriorSigma);
    for (size_t i = 0; i < k; ++i) {
      const double s = kern.sigma[i];
      kern.inv_sigma.push_back(1 / s);
      // Not divided by sigma: see the header. Most kernels sit far from the
      // edges, where norm_mass returns exactly 1 and the log is skipped.
      const double mass = norm_mass(-kern.mu[i] / s, (1 - kern.mu[i]) / s);
      kern.log_norm.push_back(-kLogSqrt2Pi - (mass == 1.0 ? 0.0 : std::log(mass)));
    }
    if (!multivariate) {
      double max_sigma = 0;
      double max_c = -INFINITY;
      for (size_t i : order) {
        if (i == n) continue;  // the prior, always summed
        kern.sorted_mu.push_back(kern.mu[i]);
        kern.sorted_inv_sigma.push_back(kern.inv_sigma[i]);
        kern.sorted_log_c.push_back(log_weights_[i] + kern.log_norm[i]);
        max_sigma = std::max(max_sigma, kern.sigma[i]);
        max_c = std::max(max_c, kern.sorted_log_c.back());
      }
      // The prior's term is at least prior_min anywhere on [0, 1].
      const double prior_min = log_weights_[n] + kern.log_norm[n] - 0.125;
      kern.window = max_sigma * std::sqrt(2 * std::max(0.0, max_c - prior_min + 40));
    }
    dims_.push_back(std::move(kern));
  }
}

size_t ParzenEstimator::pick_component(Rng& rng) const {
  const double u = unit(rng) * cumulative_.back();
  auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
  return std::min<size_t>(it - cumulative_.begin(), cumulative_.size() - 1);
}

double ParzenEstimator::sample_kernel(const DimKernels& k, size_t component, Rng& rng) const {
  const double u = unit(rng);
  if (k.categorical) {
    double acc = 0;
    for (size_t j = 0; j < k.num_choices; ++j) {
      acc += std::exp(k.log_p[component * k.num_choices + j]);
      if (u < acc) return static_cast<double>(j);
    }
    return static_cast<double>(k.num_choices - 1);
  }
  const double mu = k.mu[component];
  const double s = k.sigma[component];
  return std::clamp(mu + s * truncated_norm_sample(-mu / s, (1 - mu) / s, u), 0.0, 1.0);
}

double ParzenEstimator::sample_dim(size_t d, Rng& rng) const {
  return sample_kernel(dims_[d], pick_component(rng), rng);
}

double ParzenEstimator::log_pdf_dim(size_t d, double value) const {
  const DimKernels& k = dims_[d];
  const size_t n = log_weights_.size();
  thread_local std::vector<double> t;
  t.resize(n);
  if (k.categorical) {
    const auto c = static_cast<size_t>(value);
    for (size_t i = 0; i < n; ++i) t[i] = log_weights_[i] + k.log_p[i * k.num_choices + c];
    return log_sum_exp(t.data(), n);
  }
  const auto lo = std::lower_bound(k.sorted_mu.begin(), k.sorted_mu.end(), value - k.window) -
                  k.sorted_mu.begin();
  const auto hi = std::upper_bound(k.sorted_mu.begin(), k.sorted_mu.end(), value + k.window) -
                  k.sorted_mu.begin();
  t.clear();
  const double zp = (value - k.mu[n - 1]) * k.inv_sigma[n - 1];
  t.push_back(log_weights_[n - 1] + k.log_norm[n - 1] - 0.5 * zp * zp);
  for (auto i = lo; i < hi; ++i) {
    const double z = (value - k.sorted_mu[i]) * k.sorted_inv_sigma[i];
    t.push_back(k.sorted_log_c[i] - 0.5 * z * z);
  }
  return log_sum_exp(t.data(), t.size());
}

std::vector<double> ParzenEstimator::sample_joint(Rng& rng) const {
  const size_t component = pick_component(rng);
  std::vector<double> x(dims_.size());
  for (size_t d = 0; d < dims_.size(); ++d) x[d] = sample_kernel(dims_[d], component, rng);
  return x;
}

void ParzenEstimator::log_pdf_joint(const std::vector<std::vector<double>>& points,
                                    std::vector<double>& out) const {
  const size_t n = log_weights_.size();
  std::vector<double> t(n);
  out.resize(points.size());
  for (size_t p = 0; p < points.size(); ++p) {
    std::copy(log_weights_.begin(), log_weights_.end(), t.begin());
    for (size_t d = 0; d < dims_.size(); ++d) {
      const DimKernels& k = dims_[d];
      const double value = points[p][d];
      if (k.categorical) {
        const auto c = static_cast<size_t>(value);
        for (size_t i = 0; i < n; ++i) t[i] += k.log_p[i * k.num_choices + c];
      } else {
        for (size_t i = 0; i < n; ++i) {
          const double z = (value - k.mu[i]) * k.inv_sigma[i];
          t[i] += k.log_norm[i] - 0.5 * z * z;
        }
      }
    }
    out[p] = log_sum_exp(t.data(), n);
  }
}

}  // namespace tune::search::detail
