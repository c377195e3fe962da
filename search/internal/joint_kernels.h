// The joint (multivariate) Parzen estimator of TPE's large "above" group,
// built for evaluation only: the same mixture as ParzenEstimator's in joint
// mode (search/internal/parzen.h), built in one linear pass per dimension
// from means already sorted, and evaluated for a batch of points with
// vector arithmetic and no call into libm per kernel, so a suggestion with a
// thousand observations costs tens of microseconds instead of a sort per
// dimension and a std::exp per kernel.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "search/internal/parzen.h"

namespace tune::search::detail {

class JointKernels {
 public:
  // One component's coordinate in one dim: for a categorical dim, the
  // choice's index. mass_memo, if set, is where the caller keeps (sigma,
  // mass of the kernel on [0, 1]) from an earlier build, as in
  // SortedKernels::build: used while the sigma is unchanged, else recomputed
  // and written back.
  struct Coordinate {
    double value = 0;
    uint32_t component = 0;
    std::pair<double, double>* mass_memo = nullptr;
  };

  // Components 0..n-1 weigh weight[i] (unnormalised, > 0), the prior
  // prior_weight. columns[d] holds every component's coordinate in dim d,
  // ascending by value for a numeric dim, in any order for a categorical
  // one. Reuses its buffers: build it once and rebuild it every suggestion.
  void build(const std::vector<Dimension>& dims, const std::vector<double>& weight,
             double prior_weight, Bandwidth bandwidth, KernelScale kernel_scale,
             const std::vector<std::vector<Coordinate>>& columns);

  // The log density at each of `points` (each of dims.size()), into `out`.
  void log_pdf(const std::vector<std::vector<double>>& points, std::vector<double>& out) const;

 private:
  // A component's term is e^log_scale_ scale_[i] e^-q[i], the prior's
  // e^log_scale_ e^(prior_log_scale_ - prior_q): q sums
  // (x - mu)^2 / (2 sigma^2) over the numeric dims, less the bonus for a
  // matching choice over the categorical ones. Without the fast exp:
  double log_sum_exact(const double* x_numeric, const double* x_categorical,
                       double prior_term) const;

  size_t n_ = 0;
  // Per dim: its slot among the numeric dims, or among the categorical ones.
  std::vector<std::pair<bool, size_t>> slot_;
  // num_numeric_ numeric slots; slot j's means and 1 / (2 sigma^2) at
  // [j * n_ + i].
  size_t num_numeric_ = 0;
  std::vector<double> mu_, half_h_;
  // Categorical slot j's choices at [j * n_ + i], and its match bonus,
  // log((floor + 1) / floor).
  std::vector<double> choice_, bonus_;
  // Per component: its weight over its kernels' masses (and, for
  // KernelScale::kDensity, times min_sigma / sigma per numeric dim, the
  // min_sigmas folded into log_scale_, so no factor exceeds 1: with more
  // than ~150 numeric dims a wide kernel's scale may underflow to 0).
  std::vector<double> scale_;
  double max_log_scale_ = 0;  // log(max(scale_))
  double prior_log_scale_ = 0;
  double log_scale_ = 0;                         // the factors shared by every term
  double max_bonus_ = 0;                         // the most -q can be: every categorical bonus
  std::vector<double> sorted_mu_, sigma_, ext_;  // scratch for build()
};

}  // namespace tune::search::detail
