// The Gaussian process of PB2 (Parker-Holder et al., NeurIPS 2020), after
// Ray Tune's pb2_utils: a time-varying squared-exponential kernel
// (Bogunovic et al., AISTATS 2016)
//   k(a, b) = variance * exp(-|a[1:] - b[1:]|^2 / lengthscale)
//             * (1 - epsilon)^(|a[0] - b[0]| / 2)
// over rows whose column 0 is time, with Gaussian noise, fitted by maximum
// marginal likelihood, and the UCB bandit step that picks new
// hyperparameters. Inputs are normalised to [0, 1] by the caller.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "search/domain.h"

namespace tune::schedulers::detail {

struct TvGpParams {
  double variance = 1.0;  // GPy's initial values, as Ray sets them
  double lengthscale = 1.0;
  double epsilon = 0.1;  // capped at 0.5, as in Ray's kernel
  double noise = 1.0;    // GPy's Gaussian likelihood variance
};

class TvGp {
 public:
  // Throws tune::Error when the kernel matrix cannot be factorised even
  // with jitter.
  TvGp(Eigen::MatrixXd x, Eigen::VectorXd y, TvGpParams params);

  // GPy's predict: the mean and the variance of a new observation (noise included).
  std::pair<double, double> predict(const Eigen::VectorXd& x) const;
  double log_marginal_likelihood() const { return lml_; }
  const TvGpParams& params() const { return params_; }
  Eigen::Index size() const { return x_.rows(); }

  static double kernel(const TvGpParams& p, const Eigen::VectorXd& a, const Eigen::VectorXd& b);

 private:
  Eigen::MatrixXd x_;
  TvGpParams params_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::VectorXd alpha_;
  double lml_ = 0;
};

// The maximum-likelihood parameters from GPy's starting point (Nelder-Mead
// in log space instead of GPy's L-BFGS-B), lengthscale then clipped to
// [1e-5, 1] as Ray does.
TvGpParams fit_tv_gp(const Eigen::MatrixXd& x, const Eigen::VectorXd& y);

// Minimises f from x0 by Nelder-Mead; `step` is the initial simplex size.
// Each point is clamped into [lower, upper] per coordinate before f sees it.
std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f,
                                std::vector<double> x0, double step, int max_evals, double lower,
                                double upper);

// Ray's optimize_acq with UCB: maximises mean_m(x) + sqrt(beta) * var_m1(x),
// beta = 0.2 + max(0, log(0.4 * m.size())), over x in [0, 1]^dims, the
// fixed (time, reward) part of the input prepended; 10 random starts.
Eigen::VectorXd optimize_ucb(const TvGp& m, const TvGp& m1, const Eigen::VectorXd& fixed, int dims,
                             Rng& rng);

}  // namespace tune::schedulers::detail
