#include "schedulers/internal/tv_gp.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>

#include "core/errors.h"
#include "schedulers/internal/mutations.h"

namespace tune::schedulers::detail {

double TvGp::kernel(const TvGpParams& p, const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  const double eps = std::min(p.epsilon, 0.5);
  const double dt = std::abs(a[0] - b[0]);
  const double d2 = (a.tail(a.size() - 1) - b.tail(b.size() - 1)).squaredNorm();
  return p.variance * std::exp(-d2 / p.lengthscale) * std::pow(1 - eps, 0.5 * dt);
}

TvGp::TvGp(Eigen::MatrixXd x, Eigen::VectorXd y, TvGpParams params)
    : x_(std::move(x)), params_(params) {
  const Eigen::Index n = x_.rows();
  Eigen::MatrixXd k(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j <= i; ++j) {
      k(i, j) = k(j, i) = kernel(params_, x_.row(i).transpose(), x_.row(j).transpose());
    }
  }
  k.diagonal().array() += params_.noise;
  // Ray adds 1e-3 to the diagonal when GPy fails to factorise; so do we.
  for (double jitter : {0.0, 1e-6, 1e-3, 1e-1}) {
    Eigen::MatrixXd kj = k;
    kj.diagonal().array() += jitter;
    llt_.compute(kj);
    if (llt_.info() == Eigen::Success) break;
  }
  if (llt_.info() != Eigen::Success)
    throw Error("PB2: the GP's kernel matrix is not positive definite");
  alpha_ = llt_.solve(y);
  const Eigen::MatrixXd l = llt_.matrixL();
  lml_ = -0.5 * y.dot(alpha_) - l.diagonal().array().log().sum() -
         0.5 * static_cast<double>(n) * std::log(2 * std::numbers::pi);
}

std::pair<double, double> TvGp::predict(const Eigen::VectorXd& x) const {
  const Eigen::Index n = x_.rows();
  Eigen::VectorXd ks(n);
  for (Eigen::Index i = 0; i < n; ++i) ks[i] = kernel(params_, x, x_.row(i).transpose());
  const double mean = ks.dot(alpha_);
  const Eigen::VectorXd v = llt_.matrixL().solve(ks);
  const double var = params_.variance - v.squaredNorm() + params_.noise;
  return {mean, std::max(var, 0.0)};
}

std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f,
                                std::vector<double> x0, double step, int max_evals, double lower,
                                double upper) {
  const size_t d = x0.size();
  auto clamp = [&](std::vector<double> x) {
    for (double& v : x) v = std::clamp(v, lower, upper);
    return x;
  };
  std::vector<std::vector<double>> pts{clamp(x0)};
  for (size_t i = 0; i < d; ++i) {
    auto p = x0;
    p[i] += (p[i] + step <= upper) ? step : -step;
    pts.push_back(clamp(p));
  }
  std::vector<double> vals;
  int evals = 0;
  auto eval = [&](const std::vector<double>& x) {
    ++evals;
    const double v = f(x);
    return std::isfinite(v) ? v : std::numeric_limits<double>::max();
  };
  for (const auto& p : pts) vals.push_back(eval(p));
  while (evals < max_evals) {
    std::vector<size_t> idx(pts.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return vals[a] < vals[b]; });
    const size_t best = idx.front(), worst = idx.back(), second = idx[idx.size() - 2];
    if (std::abs(vals[worst] - vals[best]) < 1e-10) break;
    std::vector<double> centroid(d, 0.0);
    for (size_t i : idx) {
      if (i == worst) continue;
      for (size_t k = 0; k < d; ++k) centroid[k] += pts[i][k] / static_cast<double>(d);
    }
    auto along = [&](double t) {
      std::vector<double> p(d);
      for (size_t k = 0; k < d; ++k) p[k] = centroid[k] + t * (pts[worst][k] - centroid[k]);
      return clamp(p);
    };
    auto reflected = along(-1.0);
    const double fr = eval(reflected);
    if (fr < vals[best]) {
      auto expanded = along(-2.0);
      const double fe = eval(expanded);
      if (fe < fr) {
        pts[worst] = expanded, vals[worst] = fe;
      } else {
        pts[worst] = reflected, vals[worst] = fr;
      }
    } else if (fr < vals[second]) {
      pts[worst] = reflected, vals[worst] = fr;
    } else {
      auto contracted = along(0.5);
      const double fc = eval(contracted);
      if (fc < vals[worst]) {
        pts[worst] = contracted, vals[worst] = fc;
      } else {  // shrink towards the best
        for (size_t i = 0; i < pts.size(); ++i) {
          if (i == best) continue;
          for (size_t k = 0; k < d; ++k)
            pts[i][k] = pts[best][k] + 0.5 * (pts[i][k] - pts[best][k]);
          vals[i] = eval(pts[i]);
        }
      }
    }
  }
  size_t best = 0;
  for (size_t i = 1; i < pts.size(); ++i) {
    if (vals[i] < vals[best]) best = i;
  }
  return pts[best];
}

TvGpParams fit_tv_gp(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
  // θ = (log variance, log lengthscale, logit(2 epsilon), log noise).
  auto params_of = [](const std::vector<double>& t) {
    return TvGpParams{std::exp(t[0]), std::exp(t[1]), 0.5 / (1 + std::exp(-t[2])),
                      std::exp(t[3]) + 1e-8};
  };
  auto negative_lml = [&](const std::vector<double>& t) {
    try {
      return -TvGp(x, y, params_of(t)).log_marginal_likelihood();
    } catch (const Error&) {
      return std::numeric_limits<double>::infinity();
    }
  };
  // GPy's start: variance 1, lengthscale 1, epsilon 0.1, noise 1.
  const std::vector<double> start{0.0, 0.0, std::log(0.2 / 0.8), 0.0};
  TvGpParams p = params_of(nelder_mead(negative_lml, start, 1.0, 200, -12.0, 12.0));
  p.lengthscale = std::clamp(p.lengthscale, 1e-5, 1.0);
  return p;
}

Eigen::VectorXd optimize_ucb(const TvGp& m, const TvGp& m1, const Eigen::VectorXd& fixed, int dims,
                             Rng& rng) {
  const double beta = 0.2 + std::max(0.0, std::log(0.4 * static_cast<double>(m.size())));
  const double kappa = std::sqrt(beta);
  auto input = [&](const std::vector<double>& h) {
    Eigen::VectorXd x(fixed.size() + dims);
    x.head(fixed.size()) = fixed;
    for (int i = 0; i < dims; ++i) x[fixed.size() + i] = h[i];
    return x;
  };
  auto ucb = [&](const std::vector<double>& h) {
    const Eigen::VectorXd x = input(h);
    return m.predict(x).first + kappa * m1.predict(x).second;
  };
  double best_value = -std::numeric_limits<double>::infinity();
  std::vector<double> best_theta(dims, 0.5);
  for (int start = 0; start < 10; ++start) {
    std::vector<double> x0(dims);
    for (double& v : x0) v = unit(rng);
    auto h =
        nelder_mead([&](const std::vector<double>& x) { return -ucb(x); }, x0, 0.1, 100, 0.0, 1.0);
    const double value = ucb(h);
    if (value > best_value) best_value = value, best_theta = h;
  }
  Eigen::VectorXd out(dims);
  for (int i = 0; i < dims; ++i) out[i] = std::clamp(best_theta[i], 0.0, 1.0);
  return out;
}

}  // namespace tune::schedulers::detail
