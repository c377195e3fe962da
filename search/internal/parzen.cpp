#include "search/internal/parzen.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>

#include "search/internal/fast_exp.h"
#include "search/internal/normal.h"

namespace tune::search::detail {
namespace {

// log(sum(exp(t))) over `t`, skipping terms too small to change the sum.
double log_sum_exp(const double* t, size_t n) {
  double max = -INFINITY;
  for (size_t i = 0; i < n; ++i) max = std::max(max, t[i]);
  if (!std::isfinite(max)) return max;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = t[i] - max;
    if (d > -kNegligibleLog) sum += std::exp(d);
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

// sum of coef[i] e^(-z^2 / 2), z = (value - mu[i]) inv_sigma[i], over [lo, hi).
// Compiled twice: for AVX2 (no FMA, so both give the same bits) and baseline.
__attribute__((target_clones("avx2", "default"))) double kernel_sum(const double* mu,
                                                                    const double* inv_sigma,
                                                                    const double* coef, size_t lo,
                                                                    size_t hi, double value) {
  // Two independent chains of four, so the loop is not latency-bound.
  Double4 sum0{}, sum1{};
  size_t i = lo;
  for (; i + 8 <= hi; i += 8) {
    Double4 m0, s0, c0, m1, s1, c1;
    std::memcpy(&m0, mu + i, sizeof(m0));
    std::memcpy(&s0, inv_sigma + i, sizeof(s0));
    std::memcpy(&c0, coef + i, sizeof(c0));
    std::memcpy(&m1, mu + i + 4, sizeof(m1));
    std::memcpy(&s1, inv_sigma + i + 4, sizeof(s1));
    std::memcpy(&c1, coef + i + 4, sizeof(c1));
    const Double4 z0 = (value - m0) * s0;
    const Double4 z1 = (value - m1) * s1;
    sum0 += c0 * exp_nonpositive<Double4>(-0.5 * z0 * z0);
    sum1 += c1 * exp_nonpositive<Double4>(-0.5 * z1 * z1);
  }
  const Double4 sum = sum0 + sum1;
  double tail = 0;
  for (; i < hi; ++i) {
    const double z = (value - mu[i]) * inv_sigma[i];
    tail += coef[i] * exp_nonpositive(-0.5 * z * z);
  }
  return ((sum[0] + sum[1]) + (sum[2] + sum[3])) + tail;
}

}  // namespace

double fast_exp_for_test(double t) { return exp_nonpositive(t); }

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

double kernel_window(double max_sigma, double max_log_coef, double prior_log_coef) {
  const double prior_min = prior_log_coef - kPriorLogDrop;  // the prior's term on [0, 1]
  return max_sigma * std::sqrt(2 * std::max(0.0, max_log_coef - prior_min + kNegligibleLog));
}

CategoricalFloor categorical_floor(double prior_weight, size_t n, size_t num_choices) {
  const double floor = prior_weight / static_cast<double>(n + 1);
  return {.floor = floor, .row_total = floor * static_cast<double>(num_choices) + 1};
}

double magic_clip(size_t k) { return 1.0 / std::min(100.0, 1.0 + static_cast<double>(k)); }

double min_density_sigma(const Dimension& dim) {
  return dim.lattice_size > 0 ? 0.5 / dim.lattice_size : 0.0;
}

double scott_sigma(size_t n, size_t num_dims) {
  return 0.2 * std::pow(std::max<double>(static_cast<double>(n), 1.0),
                        -1.0 / (static_cast<double>(num_dims) + 4));
}

void sorted_neighbour_sigmas(const double* mu, size_t n, std::vector<double>& ext, double* sigma) {
  const size_t k = n + 1;  // with the prior
  // The means with the prior's inserted after equal ones (it has the highest
  // index in ParzenEstimator's stable order), bounded by 0 and 1.
  const size_t prior_pos = std::upper_bound(mu, mu + n, kPriorMu) - mu;
  ext.resize(k + 2);
  ext[0] = 0;
  std::copy(mu, mu + prior_pos, ext.begin() + 1);
  ext[prior_pos + 1] = kPriorMu;
  std::copy(mu + prior_pos, mu + n, ext.begin() + prior_pos + 2);
  ext[k + 1] = 1;
  const double min_sigma = magic_clip(k);
  for (size_t i = 0; i < n; ++i) {
    const size_t p = i < prior_pos ? i : i + 1;  // position among the k means
    double s = std::max(ext[p + 1] - ext[p], ext[p + 2] - ext[p + 1]);
    if (k >= 2 && p == 0) s = ext[2] - ext[1];
    if (k >= 2 && p == k - 1) s = ext[k] - ext[k - 1];
    sigma[i] = std::clamp(s, min_sigma, 1.0);
  }
}

ParzenEstimator::ParzenEstimator(const std::vector<Dimension>& dims,
                                 const std::vector<const double*>& points,
                                 const std::vector<double>& weights, double prior_weight,
                                 Bandwidth bandwidth, KernelScale scale) {
  const size_t n = points.size();
  const size_t k = n + 1;  // observations, then the prior
  std::vector<double> w = weights;
  w.push_back(prior_weight);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  double running = 0;
  for (double wi : w) {
    log_weights_.push_back(std::log(wi / total));
    running += wi / total;
    cumulative_.push_back(running);
  }

  for (size_t d = 0; d < dims.size(); ++d) {
    DimKernels kern;
    kern.categorical = dims[d].categorical();
    if (kern.categorical) {
      const size_t c = dims[d].num_choices();
      kern.num_choices = c;
      kern.log_p.assign(k * c, -std::log(static_cast<double>(c)));  // the prior row stays uniform
      const auto [floor, row_total] = categorical_floor(prior_weight, n, c);
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
    kern.sigma = neighbour_sigmas(kern.mu, order);
    kern.sigma.resize(n);
    if (bandwidth == Bandwidth::kScott) kern.sigma.assign(n, scott_sigma(n, dims.size()));
    const double min_sigma =
        std::max(magic_clip(k), scale == KernelScale::kDensity ? min_density_sigma(dims[d]) : 0.0);
    for (double& s : kern.sigma) s = std::clamp(s, std::min(min_sigma, 1.0), 1.0);
    kern.sigma.push_back(kPriorSigma);
    for (size_t i = 0; i < k; ++i) {
      const double s = kern.sigma[i];
      kern.inv_sigma.push_back(1 / s);
      // Most kernels sit far from the edges, where norm_mass returns exactly
      // 1 and the log is skipped.
      const double mass = norm_mass(-kern.mu[i] / s, (1 - kern.mu[i]) / s);
      kern.log_norm.push_back(-kLogSqrt2Pi - (mass == 1.0 ? 0.0 : std::log(mass)) -
                              (scale == KernelScale::kDensity ? std::log(s) : 0.0));
    }
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
    kern.window = kernel_window(max_sigma, max_c, log_weights_[n] + kern.log_norm[n]);
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

void SortedKernels::build(const std::vector<double>& mu, const std::vector<double>& weight,
                          double prior_weight, std::pair<double, double>* const* mass_memo) {
  const size_t n = mu.size();
  const size_t k = n + 1;  // with the prior
  double total = prior_weight;
  for (double w : weight) total += w;

  sigma_.resize(n);
  sorted_neighbour_sigmas(mu.data(), n, ext_, sigma_.data());
  const double min_sigma = magic_clip(k);

  // The prior N(0.5, 1) truncated to [0, 1].
  const double prior_mass = norm_mass(-kPriorMu / kPriorSigma, (1 - kPriorMu) / kPriorSigma);
  prior_coef_ = prior_weight / total / prior_mass * std::exp(-kLogSqrt2Pi);
  prior_log_coef_ = std::log(prior_weight / total) - std::log(prior_mass) - kLogSqrt2Pi;

  // Tier t holds sigmas up to min_sigma 2^t; most sit at the clip (tier 0).
  constexpr size_t kTiers = 8;
  tiers_.resize(kTiers);
  for (Tier& tier : tiers_) {
    tier.mu.clear();
    tier.inv_sigma.clear();
    tier.coef.clear();
  }
  double max_sigma[kTiers] = {}, max_coef[kTiers] = {};
  const double scale = std::exp(-kLogSqrt2Pi) / total;
  const double inv_min_sigma = 1 / min_sigma;
  for (size_t i = 0; i < n; ++i) {
    const double s = sigma_[i];
    size_t t = 0;
    while (t + 1 < kTiers && s > min_sigma * static_cast<double>(size_t{1} << t)) ++t;
    double mass;
    std::pair<double, double>* memo = mass_memo ? mass_memo[i] : nullptr;
    if (memo && memo->first == s) {
      mass = memo->second;
    } else {
      mass = norm_mass(-mu[i] / s, (1 - mu[i]) / s);
      if (memo) *memo = {s, mass};
    }
    // Not divided by s: see ParzenEstimator. Most kernels sit at the clip,
    // away from the edges (mass exactly 1): skip their divisions.
    const double coef = mass == 1.0 ? weight[i] * scale : weight[i] * scale / mass;
    Tier& tier = tiers_[t];
    tier.mu.push_back(mu[i]);
    tier.inv_sigma.push_back(s == min_sigma ? inv_min_sigma : 1 / s);
    tier.coef.push_back(coef);
    max_sigma[t] = std::max(max_sigma[t], s);
    max_coef[t] = std::max(max_coef[t], coef);
  }
  for (size_t t = 0; t < kTiers; ++t) {
    if (tiers_[t].mu.empty()) continue;
    tiers_[t].window = kernel_window(max_sigma[t], std::log(max_coef[t]), prior_log_coef_);
  }
}

double SortedKernels::log_pdf(double value) const {
  const double zp = (value - kPriorMu) / kPriorSigma;
  double sum = prior_coef_ * std::exp(-0.5 * zp * zp);
  for (const Tier& tier : tiers_) {
    if (tier.mu.empty()) continue;
    const auto lo = std::lower_bound(tier.mu.begin(), tier.mu.end(), value - tier.window);
    const auto hi = std::upper_bound(lo, tier.mu.end(), value + tier.window);
    sum += kernel_sum(tier.mu.data(), tier.inv_sigma.data(), tier.coef.data(), lo - tier.mu.begin(),
                      hi - tier.mu.begin(), value);
  }
  // Underflow only with a vanishing prior weight and no component near.
  if (!(sum >= 1e-290)) return log_pdf_exact(value);
  return std::log(sum);
}

double SortedKernels::log_pdf_exact(double value) const {
  const double zp = (value - kPriorMu) / kPriorSigma;
  std::vector<double> t{prior_log_coef_ - 0.5 * zp * zp};
  for (const Tier& tier : tiers_) {
    for (size_t i = 0; i < tier.mu.size(); ++i) {
      const double z = (value - tier.mu[i]) * tier.inv_sigma[i];
      t.push_back(std::log(tier.coef[i]) - 0.5 * z * z);
    }
  }
  return log_sum_exp(t.data(), t.size());
}

}  // namespace tune::search::detail
