#include "search/internal/gaussian_process.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>

namespace tune::search::detail {
namespace {

constexpr double kSqrt5 = 2.23606797749978969641;
constexpr double kMinNoise = 1e-6;  // added to the fitted noise: keeps K invertible
// Weak priors on theta: log lengthscale ~ N(log 0.5, 1), log signal ~ N(0, 1.5),
// log noise ~ N(log 1e-4, 3).
constexpr double kLengthMean = -0.69314718055994531;
constexpr double kLengthSd = 1.0;
constexpr double kSignalSd = 1.5;
constexpr double kNoiseMean = -9.2103403719761836;
constexpr double kNoiseSd = 3.0;

// Matern-5/2 as a function of the scaled distance r.
double matern(double r) { return (1 + kSqrt5 * r + 5.0 / 3.0 * r * r) * std::exp(-kSqrt5 * r); }

// Negative log posterior of theta and its gradient. +inf when K is not
// positive definite.
class Objective {
 public:
  // groups[k]: the lengthscale input k shares (its squared differences add).
  // extra_noise: empty, or a fixed variance added to each point's noise.
  Objective(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const std::vector<int>& groups,
            const Eigen::VectorXd& extra_noise)
      : X_(X), y_(y), extra_(extra_noise) {
    const auto n = X.rows();
    int g = 0;
    for (const int k : groups) g = std::max(g, k + 1);
    sq_.assign(g, Eigen::MatrixXd::Zero(n, n));
    for (Eigen::Index k = 0; k < X.cols(); ++k) {
      for (Eigen::Index i = 0; i < n; ++i) {
        for (Eigen::Index j = 0; j < n; ++j) {
          const double diff = X(i, k) - X(j, k);
          sq_[groups[k]](i, j) += diff * diff;
        }
      }
    }
  }

  double operator()(const Eigen::VectorXd& theta, Eigen::VectorXd& grad) const {
    const auto n = X_.rows();
    const auto d = static_cast<Eigen::Index>(sq_.size());
    grad.setZero(theta.size());
    Eigen::MatrixXd scaled = Eigen::MatrixXd::Zero(n, n);  // r^2
    std::vector<double> inv_l2(d);
    for (Eigen::Index k = 0; k < d; ++k) {
      inv_l2[k] = std::exp(-2 * theta[k]);
      scaled += inv_l2[k] * sq_[k];
    }
    const double signal = std::exp(theta[d]);
    const double noise = std::exp(theta[d + 1]) + kMinNoise;
    Eigen::MatrixXd K(n, n);
    Eigen::MatrixXd dkdr2(n, n);  // dK / d(r^2) times -1, without the signal
    for (Eigen::Index j = 0; j < n; ++j) {
      for (Eigen::Index i = 0; i < n; ++i) {
        const double r = std::sqrt(scaled(i, j));
        const double e = std::exp(-kSqrt5 * r);
        K(i, j) = signal * (1 + kSqrt5 * r + 5.0 / 3.0 * r * r) * e;
        dkdr2(i, j) = 5.0 / 6.0 * (1 + kSqrt5 * r) * e;
      }
    }
    K.diagonal().array() += noise;
    if (extra_.size() > 0) K.diagonal() += extra_;
    Eigen::LLT<Eigen::MatrixXd> llt(K);
    if (llt.info() != Eigen::Success) return std::numeric_limits<double>::infinity();
    const Eigen::VectorXd alpha = llt.solve(y_);
    const Eigen::MatrixXd L = llt.matrixL();
    const double log_det = 2 * L.diagonal().array().log().sum();
    double value = 0.5 * y_.dot(alpha) + 0.5 * log_det;
    // dL/dtheta_j = 0.5 tr(W dK_j), W = alpha alpha^T - K^-1.
    Eigen::MatrixXd W = llt.solve(Eigen::MatrixXd::Identity(n, n));
    W = alpha * alpha.transpose() - W;
    // d K_ij / d log l_k = signal * 5/3 (1 + sqrt5 r) e^(-sqrt5 r) (dx_k / l_k)^2
    const Eigen::MatrixXd common = (W.array() * dkdr2.array()).matrix() * (2 * signal);
    for (Eigen::Index k = 0; k < d; ++k) {
      grad[k] = -0.5 * inv_l2[k] * (common.array() * sq_[k].array()).sum();
    }
    grad[d] = -0.5 * (W.array() * (K.array())).sum() + 0.5 * noise * W.trace();
    if (extra_.size() > 0) grad[d] += 0.5 * W.diagonal().dot(extra_);
    grad[d + 1] = -0.5 * (noise - kMinNoise) * W.trace();
    // Priors.
    for (Eigen::Index k = 0; k < d; ++k) {
      const double z = (theta[k] - kLengthMean) / kLengthSd;
      value += 0.5 * z * z;
      grad[k] += z / kLengthSd;
    }
    value += 0.5 * theta[d] * theta[d] / (kSignalSd * kSignalSd);
    grad[d] += theta[d] / (kSignalSd * kSignalSd);
    const double zn = (theta[d + 1] - kNoiseMean) / kNoiseSd;
    value += 0.5 * zn * zn;
    grad[d + 1] += zn / kNoiseSd;
    return value;
  }

 private:
  const Eigen::MatrixXd& X_;
  const Eigen::VectorXd& y_;
  const Eigen::VectorXd& extra_;
  std::vector<Eigen::MatrixXd> sq_;  // per input: squared differences
};

// L-BFGS (memory 6) with a backtracking Armijo line search. Returns the
// best point found and its value in `best_value`.
Eigen::VectorXd minimise(const Objective& f, Eigen::VectorXd x, int max_iterations,
                         double& best_value) {
  constexpr int kMemory = 6;
  Eigen::VectorXd g;
  double fx = f(x, g);
  best_value = fx;
  if (!std::isfinite(fx)) return x;
  std::deque<std::pair<Eigen::VectorXd, Eigen::VectorXd>> history;  // (s, y)
  for (int iter = 0; iter < max_iterations; ++iter) {
    // Two-loop recursion.
    Eigen::VectorXd q = g;
    std::vector<double> a(history.size());
    for (size_t i = history.size(); i-- > 0;) {
      const auto& [s, yv] = history[i];
      a[i] = s.dot(q) / yv.dot(s);
      q -= a[i] * yv;
    }
    if (!history.empty()) {
      const auto& [s, yv] = history.back();
      q *= s.dot(yv) / yv.dot(yv);
    } else {
      q /= std::max(1.0, g.norm());
    }
    for (size_t i = 0; i < history.size(); ++i) {
      const auto& [s, yv] = history[i];
      q += s * (a[i] - yv.dot(q) / yv.dot(s));
    }
    Eigen::VectorXd dir = -q;
    double slope = g.dot(dir);
    if (!(slope < 0)) {
      dir = -g;
      slope = -g.squaredNorm();
      history.clear();
    }
    double step = 1;
    Eigen::VectorXd next, g_next;
    double f_next = fx;
    bool accepted = false;
    for (int ls = 0; ls < 20; ++ls, step *= 0.5) {
      next = x + step * dir;
      f_next = f(next, g_next);
      if (std::isfinite(f_next) && f_next <= fx + 1e-4 * step * slope) {
        accepted = true;
        break;
      }
    }
    if (!accepted) break;
    Eigen::VectorXd s = next - x;
    Eigen::VectorXd yv = g_next - g;
    if (s.dot(yv) > 1e-12) {
      history.emplace_back(std::move(s), std::move(yv));
      if (history.size() > kMemory) history.pop_front();
    }
    const double improvement = fx - f_next;
    x = std::move(next);
    g = std::move(g_next);
    fx = f_next;
    if (g.lpNorm<Eigen::Infinity>() < 1e-5 || improvement < 1e-9 * std::max(1.0, std::abs(fx))) {
      break;
    }
  }
  best_value = fx;
  return x;
}

}  // namespace

Eigen::VectorXd GaussianProcess::default_theta(int dims) {
  Eigen::VectorXd theta(dims + 2);
  theta.head(dims).setConstant(std::log(0.5));
  theta[dims] = 0;
  theta[dims + 1] = std::log(1e-4);
  return theta;
}

Eigen::VectorXd GaussianProcess::fit_theta(const Eigen::MatrixXd& X, const Eigen::VectorXd& y,
                                           const std::vector<Eigen::VectorXd>& starts,
                                           int max_iterations, std::vector<int> groups,
                                           double* log_posterior,
                                           const Eigen::VectorXd& extra_noise) {
  if (groups.empty()) {
    groups.resize(X.cols());
    std::iota(groups.begin(), groups.end(), 0);
  }
  const Objective objective(X, y, groups, extra_noise);
  Eigen::VectorXd best = starts.front();
  double best_value = std::numeric_limits<double>::infinity();
  for (const Eigen::VectorXd& start : starts) {
    double value;
    Eigen::VectorXd theta = minimise(objective, start, max_iterations, value);
    if (value < best_value) {
      best_value = value;
      best = std::move(theta);
    }
  }
  if (log_posterior != nullptr) *log_posterior = -best_value;
  // Keep the lengthscales where the unit cube can tell them apart.
  const auto d = best.size() - 2;
  for (Eigen::Index k = 0; k < d; ++k) best[k] = std::clamp(best[k], std::log(1e-3), std::log(1e3));
  best[d] = std::clamp(best[d], std::log(1e-4), std::log(1e4));
  best[d + 1] = std::clamp(best[d + 1], std::log(1e-9), std::log(1e2));
  return best;
}

GaussianProcess::GaussianProcess(Eigen::MatrixXd X, const Eigen::VectorXd& y, Eigen::VectorXd theta,
                                 const Eigen::VectorXd& extra_noise, PriorMean prior)
    : X_(std::move(X)), theta_(std::move(theta)), prior_(std::move(prior)) {
  Eigen::VectorXd departure = y;
  if (prior_.base) {
    Eigen::VectorXd base, ignored;
    prior_.base->predict(X_, base, ignored);
    departure = (y - base).array() - prior_.offset;
    departure /= prior_.scale;
  }
  const auto n = X_.rows();
  const auto d = X_.cols();
  inv_lengthscale_ = (-theta_.head(d)).array().exp();
  signal_ = std::exp(theta_[d]);
  const double noise = std::exp(theta_[d + 1]) + kMinNoise;
  X_ = X_.array().rowwise() * inv_lengthscale_.transpose().array();
  Eigen::MatrixXd K(n, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = 0; i < n; ++i) K(i, j) = signal_ * matern((X_.row(i) - X_.row(j)).norm());
  }
  K.diagonal().array() += noise;
  if (extra_noise.size() > 0) K.diagonal().head(extra_noise.size()) += extra_noise;
  for (double jitter = 1e-8;; jitter *= 10) {
    llt_.compute(K);
    if (llt_.info() == Eigen::Success || jitter > 1) break;
    K.diagonal().array() += jitter;
  }
  alpha_ = llt_.solve(departure);
}

void GaussianProcess::predict(const Eigen::MatrixXd& Q, Eigen::VectorXd& mean,
                              Eigen::VectorXd& var) const {
  const auto m = Q.rows();
  const auto n = X_.rows();
  const Eigen::MatrixXd scaled = Q.array().rowwise() * inv_lengthscale_.transpose().array();
  Eigen::MatrixXd Ks(n, m);
  for (Eigen::Index j = 0; j < m; ++j) {
    for (Eigen::Index i = 0; i < n; ++i) {
      Ks(i, j) = signal_ * matern((X_.row(i) - scaled.row(j)).norm());
    }
  }
  mean = Ks.transpose() * alpha_;
  const Eigen::MatrixXd V = llt_.matrixL().solve(Ks);
  var = (signal_ - V.colwise().squaredNorm().transpose().array()).max(1e-12).matrix();
  if (prior_.base) {
    Eigen::VectorXd base, ignored;
    prior_.base->predict(Q, base, ignored);
    mean = base + ((prior_.scale * mean).array() + prior_.offset).matrix();
    var *= prior_.scale * prior_.scale;
  }
}

}  // namespace tune::search::detail
