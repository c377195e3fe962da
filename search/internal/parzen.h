// The Parzen estimator of TPE (Bergstra et al. 2011), as Optuna 3.1 builds
// it: a weighted mixture with one component per observation plus a prior
// component, over the encoded space of detail::SpaceEncoding.
//
//   numeric dims      truncated normals on [0, 1]; the prior is N(0.5, 1).
//                     Sigmas (Bandwidth): kNeighbour, from the distance to
//                     the neighbouring means per dimension (Optuna's
//                     univariate rule, and Bergstra's); kScott, one per dim,
//                     0.2 n^(-1 / (d + 4)) (Optuna's multivariate rule).
//                     Either is clipped to >= 1 / min(100, 1 + n) ("magic
//                     clip"). In joint mode a component is the product of
//                     its dims' kernels, whichever rule made them.
//   categorical dims  each observation's own value gets +1 over a uniform
//                     floor of prior_weight / (n + 1); the prior is uniform.
//   weights           given per observation (TPE's: Optuna's default_weights
//                     or by improvement, see tpe.h); the prior weighs
//                     prior_weight.
//   densities         KernelScale::kOptuna, as Optuna 3.1 evaluates them:
//                     a component's truncated normal is not divided by its
//                     sigma (Optuna's truncnorm.logpdf leaves out the
//                     scale), so the value is a mixture whose components
//                     weigh w_i sigma_i (per dimension, in joint mode), up
//                     to a constant that cancels in TPE's l/g comparison.
//                     An isolated observation, with its wide kernel, counts
//                     for more than one in a cluster, and the prior (sigma
//                     1) for more than its weight. KernelScale::kDensity
//                     divides by sigma: a true kernel density estimate.
//                     Sampling uses the weights w_i alone either way, as
//                     Optuna's does. Measured over 100 seeds on Branin,
//                     Hartmann3/6, six-hump camel and Rosenbrock-4, kOptuna
//                     is better in univariate mode on all five; in joint
//                     mode with neighbour sigmas, kDensity is (with TPE's
//                     gamma 0.15; it also stops the joint model from
//                     sticking to a wrong choice in mixed spaces).
#pragma once

#include <utility>
#include <vector>

#include "search/internal/space_encoding.h"

namespace tune::search::detail {

// The prior component every numeric estimator adds, N(0.5, 1) on the
// normalised [0, 1] range: its mean at the middle, its sigma the whole range,
// as Optuna's.
inline constexpr double kPriorMu = 0.5;
inline constexpr double kPriorSigma = 1.0;
// How far the prior's log term falls below its peak at worst on [0, 1]
// (at either end): (0.5 / kPriorSigma)^2 / 2.
inline constexpr double kPriorLogDrop =
    (1 - kPriorMu) * (1 - kPriorMu) / (2 * kPriorSigma * kPriorSigma);
// A kernel whose term is below e^-kNegligibleLog of the prior's anywhere on
// [0, 1] is left out of a sum: it changes it by less than 1e-17 relative.
inline constexpr double kNegligibleLog = 40;

// The half-width around a value beyond which a numeric kernel of sigma at
// most `max_sigma` and log coefficient at most `max_log_coef` is negligible
// beside the prior, whose log coefficient (its term's peak) is
// `prior_log_coef`: the window within which a sum must visit kernels.
double kernel_window(double max_sigma, double max_log_coef, double prior_log_coef);

// The categorical kernel of an observation, in a mixture of n observation
// components and the prior: 1 on its own choice over a floor of
// prior_weight / (n + 1) on every choice, divided by the row's total, floor
// * num_choices + 1. (The prior component itself is uniform.)
struct CategoricalFloor {
  double floor = 0;
  double row_total = 1;
};
CategoricalFloor categorical_floor(double prior_weight, size_t n, size_t num_choices);

enum class Bandwidth { kNeighbour, kScott };

// How a numeric kernel is scaled: kOptuna leaves out its 1 / sigma, as
// Optuna 3.1 does (see "densities" above); kDensity keeps it, so every
// kernel is a density and a wide one no longer outweighs a narrow one (and
// sigmas are at least min_density_sigma()).
enum class KernelScale { kOptuna, kDensity };

class ParzenEstimator {
 public:
  // `weights[i]` (unnormalised, > 0) is `points[i]`'s.
  ParzenEstimator(const std::vector<Dimension>& dims, const std::vector<const double*>& points,
                  const std::vector<double>& weights, double prior_weight, Bandwidth bandwidth,
                  KernelScale scale);

  // Univariate: a value for dimension `d` alone, and its log density.
  double sample_dim(size_t d, Rng& rng) const;
  double log_pdf_dim(size_t d, double value) const;

  // Multivariate: a joint point, and the log densities of `points`
  // (each of size dims().size()) written to `out`.
  std::vector<double> sample_joint(Rng& rng) const;
  void log_pdf_joint(const std::vector<std::vector<double>>& points,
                     std::vector<double>& out) const;

 private:
  struct DimKernels {
    bool categorical = false;
    size_t num_choices = 0;
    std::vector<double> mu, sigma, inv_sigma;
    std::vector<double> log_norm;  // -log(sqrt(2 pi)) - log(mass on [0, 1]) [- log(sigma)]
    std::vector<double> log_p;     // categorical: [component * num_choices + choice]
    // Univariate evaluation: the observation components sorted by mean, with
    // lw + log_norm folded in, and the half-width beyond which a component's
    // term is below e^-40 of the prior's anywhere on [0, 1], so log_pdf_dim
    // sums only the components near the value (same result to ~1e-15).
    std::vector<double> sorted_mu, sorted_inv_sigma, sorted_log_c;
    double window = 0;
  };

  size_t pick_component(Rng& rng) const;
  double sample_kernel(const DimKernels& k, size_t component, Rng& rng) const;

  std::vector<DimKernels> dims_;
  std::vector<double> log_weights_;  // normalised, prior last
  std::vector<double> cumulative_;   // running sum of the weights, for sampling
};

// The e^t (t <= 0) that SortedKernels sums with, for its accuracy test.
double fast_exp_for_test(double t);

// Optuna's default_weights(n).
std::vector<double> tpe_weights(size_t n);

// The smallest sigma of a mixture of k components (the magic clip).
double magic_clip(size_t k);

// The narrowest kernel KernelScale::kDensity allows in `dim`: half a
// lattice step on an integer or quantized dim, else 0. Ties there shrink
// neighbour sigmas to the magic clip, and a density's peak on a lattice
// value would grow with 1 / sigma for no better knowledge of it. Measured on
// a hyperparameter-like space with integers (search_quality
// --more-functions, hpo_mixed, 500 seeds): median regret 0.24 / 0.061 after
// 50 / 100 trials, against 0.30 / 0.071 without the floor.
double min_density_sigma(const Dimension& dim);

// Bandwidth::kScott's sigma for n observations in num_dims dimensions.
double scott_sigma(size_t n, size_t num_dims);

// Bandwidth::kNeighbour's sigmas for n observation means sorted ascending,
// written to sigma[0..n): the prior's mean 0.5 counts among them (after
// equal means), 0 and 1 bound the ends except that the outermost means use
// their inner neighbour (Optuna's consider_endpoints=False), and the result
// is clipped to [magic_clip(n + 1), 1]. `ext` is scratch.
void sorted_neighbour_sigmas(const double* mu, size_t n, std::vector<double>& ext, double* sigma);

// One numeric dimension of a univariate Parzen estimator built for
// evaluation only: the same mixture as ParzenEstimator's (neighbour sigmas,
// magic clip, prior N(0.5, 1), truncation to [0, 1]), from means already
// sorted, so TPE's large "above" group costs a linear pass per suggestion.
//
// log_pdf sums in linear space over the components near the value only:
// components are grouped into tiers of similar sigma, each sorted by mean,
// and a tier skips the components whose term is below e^-40 of the prior's
// anywhere on [0, 1] (the same cut as ParzenEstimator::log_pdf_dim, so the
// two agree to ~1e-13 relative).
class SortedKernels {
 public:
  // `mu` ascending in [0, 1], `weight` parallel to it (unnormalised, > 0).
  // Reuses its buffers: build it once and rebuild it every suggestion.
  // `mass_memo`, if given, is parallel to `mu`: null, or where the caller
  // keeps (sigma, mass of the kernel on [0, 1]) from an earlier build; it is
  // used while the sigma is unchanged, else recomputed and written back (a
  // component's mean never changes and its sigma rarely, so the caller keeps
  // one per observation and the erfc calls are skipped).
  void build(const std::vector<double>& mu, const std::vector<double>& weight, double prior_weight,
             std::pair<double, double>* const* mass_memo = nullptr);
  double log_pdf(double value) const;

 private:
  struct Tier {
    std::vector<double> mu, inv_sigma, coef;  // coef: w / (sigma sqrt(2 pi) mass)
    double window = 0;                        // |value - mu| beyond which terms are dropped
  };

  double log_pdf_exact(double value) const;

  std::vector<Tier> tiers_;
  double prior_coef_ = 0;
  double prior_log_coef_ = 0;
  std::vector<double> sigma_, ext_;  // scratch for build()
};

}  // namespace tune::search::detail
