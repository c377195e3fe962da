#include "search/internal/joint_kernels.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "search/internal/fast_exp.h"
#include "search/internal/normal.h"

namespace tune::search::detail {
namespace {

// sum over components i of scale[i] e^(-q[i] - ref), q as in the header,
// for one point (x_numeric, x_categorical): one pass over the components,
// four at a time, leaving out terms whose exponent is at most `cut`.
// Compiled twice, for AVX2 (no FMA) and baseline; each lane's arithmetic is
// the same in both and the sums add in the same order, so both give the
// same bits, and a seed the same configs on any x86-64.
__attribute__((target_clones("avx2", "default"))) double kernel_sum(
    size_t n, const double* scale, const double* mu, const double* half_h, size_t num_numeric,
    const double* x_numeric, const double* choice, const double* bonus, size_t num_categorical,
    const double* x_categorical, double ref, double cut) {
  Double4 sum{};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    Double4 q{};
    for (size_t j = 0; j < num_numeric; ++j) {
      Double4 m, h;
      std::memcpy(&m, mu + j * n + i, sizeof(m));
      std::memcpy(&h, half_h + j * n + i, sizeof(h));
      const Double4 d = x_numeric[j] - m;
      q += h * (d * d);
    }
    for (size_t j = 0; j < num_categorical; ++j) {
      Double4 c;
      std::memcpy(&c, choice + j * n + i, sizeof(c));
      const Bits4 match = reinterpret_cast<Bits4>(c == x_categorical[j]);
      q -= reinterpret_cast<Double4>(match & std::bit_cast<uint64_t>(bonus[j]));
    }
    // Far from all four (the usual case with a thousand kernels in several
    // dims): their terms cannot change the sum, so skip the exps.
    const Double4 t = -q - ref;
    if (!((t[0] > cut) | (t[1] > cut) | (t[2] > cut) | (t[3] > cut))) continue;
    Double4 s;
    std::memcpy(&s, scale + i, sizeof(s));
    sum += s * exp_nonpositive<Double4>(t);
  }
  double tail = 0;
  for (; i < n; ++i) {
    double q = 0;
    for (size_t j = 0; j < num_numeric; ++j) {
      const double d = x_numeric[j] - mu[j * n + i];
      q += half_h[j * n + i] * (d * d);
    }
    for (size_t j = 0; j < num_categorical; ++j) {
      q -= choice[j * n + i] == x_categorical[j] ? bonus[j] : 0.0;
    }
    if (-q - ref > cut) tail += scale[i] * exp_nonpositive(-q - ref);
  }
  return ((sum[0] + sum[1]) + (sum[2] + sum[3])) + tail;
}

}  // namespace

void JointKernels::build(const std::vector<Dimension>& dims, const std::vector<double>& weight,
                         double prior_weight, Bandwidth bandwidth, KernelScale kernel_scale,
                         const std::vector<std::vector<Coordinate>>& columns) {
  n_ = weight.size();
  const size_t k = n_ + 1;  // with the prior
  double total = prior_weight;
  for (double w : weight) total += w;
  scale_.assign(weight.begin(), weight.end());
  log_scale_ = -std::log(total);
  prior_log_scale_ = std::log(prior_weight);
  max_bonus_ = 0;
  num_numeric_ = 0;
  slot_.clear();
  mu_.clear();
  half_h_.clear();
  choice_.clear();
  bonus_.clear();

  const double prior_log_mass = std::log(norm_mass(-kPriorMu, 1 - kPriorMu));
  for (size_t d = 0; d < dims.size(); ++d) {
    const std::vector<Coordinate>& column = columns[d];
    if (dims[d].categorical()) {
      // As ParzenEstimator: each component puts 1 on its own choice over a
      // floor on every choice; the prior is uniform.
      const auto c = static_cast<double>(dims[d].num_choices());
      const auto [floor, row_total] = categorical_floor(prior_weight, n_, dims[d].num_choices());
      const double log_base = std::log(floor / row_total);
      slot_.emplace_back(true, bonus_.size());
      bonus_.push_back(std::log((floor + 1) / floor));
      log_scale_ += log_base;
      prior_log_scale_ -= std::log(c) + log_base;
      max_bonus_ += bonus_.back();
      const size_t base = choice_.size();
      choice_.resize(base + n_);
      for (const Coordinate& e : column) choice_[base + e.component] = e.value;
      continue;
    }
    slot_.emplace_back(false, num_numeric_++);
    const size_t base = mu_.size();
    mu_.resize(base + n_);
    half_h_.resize(base + n_);
    sorted_mu_.resize(n_);
    sigma_.resize(n_);
    for (size_t j = 0; j < n_; ++j) sorted_mu_[j] = column[j].value;
    if (bandwidth == Bandwidth::kScott) {
      sigma_.assign(n_, std::clamp(scott_sigma(n_, dims.size()), magic_clip(k), 1.0));
    } else {
      sorted_neighbour_sigmas(sorted_mu_.data(), n_, ext_, sigma_.data());
    }
    const bool density = kernel_scale == KernelScale::kDensity;
    if (const double floor = std::min(1.0, min_density_sigma(dims[d])); density && floor > 0) {
      for (double& s : sigma_) s = std::max(s, floor);
    }
    log_scale_ -= kLogSqrt2Pi;
    prior_log_scale_ -= prior_log_mass;
    const double min_sigma = magic_clip(k);
    if (density) {  // 1 / sigma as (min_sigma / sigma) / min_sigma; the prior's sigma is 1
      log_scale_ -= std::log(min_sigma);
      prior_log_scale_ += std::log(min_sigma);
    }
    for (size_t j = 0; j < n_; ++j) {
      const Coordinate& e = column[j];
      const double mu = sorted_mu_[j], s = sigma_[j];
      mu_[base + e.component] = mu;
      half_h_[base + e.component] = 0.5 / (s * s);
      // Most kernels lie inside [0, 1], with a mass of exactly 1.
      if (density) scale_[e.component] *= min_sigma / s;
      double mass;
      if (e.mass_memo && e.mass_memo->first == s) {
        mass = e.mass_memo->second;
      } else {
        mass = norm_mass(-mu / s, (1 - mu) / s);
        if (e.mass_memo) *e.mass_memo = {s, mass};
      }
      if (mass != 1.0) scale_[e.component] /= mass;
    }
  }
  max_log_scale_ = std::log(n_ ? *std::max_element(scale_.begin(), scale_.end()) : 1.0);
}

void JointKernels::log_pdf(const std::vector<std::vector<double>>& points,
                           std::vector<double>& out) const {
  out.resize(points.size());
  const size_t num_categorical = bonus_.size();
  std::vector<double> x_numeric(num_numeric_), x_categorical(num_categorical);
  for (size_t p = 0; p < points.size(); ++p) {
    double prior_q = 0;
    for (size_t d = 0; d < slot_.size(); ++d) {
      const double x = points[p][d];
      if (slot_[d].first) {
        x_categorical[slot_[d].second] = x;
      } else {
        x_numeric[slot_[d].second] = x;
        prior_q += 0.5 * (x - kPriorMu) * (x - kPriorMu);
      }
    }
    // No exponent is positive: -q is at most max_bonus_.
    const double prior_term = prior_log_scale_ - prior_q;
    const double ref = std::max(max_bonus_, prior_term);
    // A term below e^-40 of the prior's changes the sum by less than 1e-17
    // (times n_): leave it out.
    const double cut = prior_term - ref - kNegligibleLog - max_log_scale_;
    const double sum =
        kernel_sum(n_, scale_.data(), mu_.data(), half_h_.data(), num_numeric_, x_numeric.data(),
                   choice_.data(), bonus_.data(), num_categorical, x_categorical.data(), ref, cut) +
        exp_nonpositive(prior_term - ref);
    // Underflow only when every kernel is far from the point and the prior
    // weighs next to nothing.
    out[p] = log_scale_ + (sum >= 1e-290
                               ? ref + std::log(sum)
                               : log_sum_exact(x_numeric.data(), x_categorical.data(), prior_term));
  }
}

double JointKernels::log_sum_exact(const double* x_numeric, const double* x_categorical,
                                   double prior_term) const {
  std::vector<double> t{prior_term};
  for (size_t i = 0; i < n_; ++i) {
    double q = 0;
    for (size_t j = 0; j < num_numeric_; ++j) {
      const double d = x_numeric[j] - mu_[j * n_ + i];
      q += half_h_[j * n_ + i] * d * d;
    }
    for (size_t j = 0; j < bonus_.size(); ++j) {
      q -= choice_[j * n_ + i] == x_categorical[j] ? bonus_[j] : 0.0;
    }
    t.push_back(std::log(scale_[i]) - q);
  }
  const double max = *std::max_element(t.begin(), t.end());
  double sum = 0;
  for (double ti : t) sum += std::exp(ti - max);
  return max + std::log(sum);
}

}  // namespace tune::search::detail
