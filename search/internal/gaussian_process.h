// A Gaussian process regressor for GP-BO: Matern-5/2 kernel with one
// lengthscale per input (ARD), a signal variance and a noise variance, zero
// mean over standardised targets.
//
// Hyperparameters theta = (log lengthscale_1..D, log signal variance,
// log noise variance) maximise the log marginal likelihood plus weak
// Gaussian priors on theta (a MAP estimate, as BoTorch does, which keeps a
// few points from collapsing a lengthscale), by L-BFGS from each start.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <vector>

namespace tune::search::detail {

class GaussianProcess;

// A prior mean other than zero: `base`'s posterior mean plus `offset`. The
// GP then models how the targets depart from it, divided by `scale` (a warm
// start: the earlier function as its trials describe it, and how this run's
// function differs).
struct PriorMean {
  std::shared_ptr<const GaussianProcess> base;
  double offset = 0;
  double scale = 1;
};

class GaussianProcess {
 public:
  // The default start: lengthscales 0.5 on the unit cube, unit signal, noise 1e-4.
  static Eigen::VectorXd default_theta(int dims);

  // Returns the best theta found from each of `starts` (L-BFGS, at most
  // `max_iterations` each) for inputs X (n x D, rows are points) and targets y.
  // `groups`, when given, ties lengthscales: input k uses lengthscale
  // groups[k] (0..G-1), so theta and the starts have G + 2 entries; empty
  // means one per input. The constructor takes one per input.
  // `log_posterior`, when given, gets the log marginal likelihood plus the
  // log prior at the theta returned (before clamping). `extra_noise`, when
  // not empty, holds a known variance per point added to the fitted noise
  // (points measured less faithfully than the others: heteroscedastic).
  static Eigen::VectorXd fit_theta(const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                                   const std::vector<Eigen::VectorXd>& starts, int max_iterations,
                                   std::vector<int> groups = {}, double* log_posterior = nullptr,
                                   const Eigen::VectorXd& extra_noise = {});

  // Conditions on (X, y) under `theta`. `extra_noise`: as fit_theta's, for
  // the first extra_noise.size() points (the rest have none). `prior`: the
  // mean y departs from (none: zero); theta is the departure's.
  GaussianProcess(Eigen::MatrixXd X, const Eigen::VectorXd& y, Eigen::VectorXd theta,
                  const Eigen::VectorXd& extra_noise = {}, PriorMean prior = {});

  // Posterior mean and variance at each row of Q.
  void predict(const Eigen::MatrixXd& Q, Eigen::VectorXd& mean, Eigen::VectorXd& var) const;

 private:
  Eigen::MatrixXd X_;
  Eigen::VectorXd theta_;
  Eigen::VectorXd inv_lengthscale_;
  double signal_ = 1;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::VectorXd alpha_;  // K^-1 y (y's departure from the prior mean, scaled)
  PriorMean prior_;
};

}  // namespace tune::search::detail
