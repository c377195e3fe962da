#include "search/gp.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/errors.h"
#include "search/internal/gaussian_process.h"
#include "search/internal/normal.h"
#include "search/internal/output_transform.h"

namespace tune::search {
namespace {

constexpr size_t kMaxFitPoints = 128;
constexpr int kFitIterations = 50;
constexpr int kRefined = 3;
constexpr int kRefineSteps = 20;
constexpr int kExchangeRounds = 4;  // refine, then one categorical change, repeated
constexpr double kLocalSd = 0.1;    // perturbation of the best points, on the unit scale
// Power-transform lambdas tried besides the normal-draws one: a square root
// (a bowl's loss, quadratic near the best, comes out near linear) and none.
constexpr double kPowerLambdas[] = {0.5, 1.0};

using detail::GaussianProcess;
using detail::OutputTransform;
using detail::unit;

double normal(Rng& rng) {
  const double u1 = unit(rng);
  const double u2 = unit(rng);
  return std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
}

// Log EI of minimisation below `best` at each row of Q.
Eigen::VectorXd log_ei(const GaussianProcess& gp, const Eigen::MatrixXd& Q, double best) {
  Eigen::VectorXd mean, var;
  gp.predict(Q, mean, var);
  Eigen::VectorXd out(Q.rows());
  for (Eigen::Index i = 0; i < Q.rows(); ++i) {
    const double sd = std::sqrt(var[i]);
    out[i] = std::log(sd) + detail::log_ei_factor((best - mean[i]) / sd);
  }
  return out;
}

// Numeric dims as they are, categorical ones one-hot.
int gp_dims(const std::vector<detail::Dimension>& dims) {
  int n = 0;
  for (const auto& dim : dims) {
    n += dim.categorical() ? static_cast<int>(dim.num_choices()) : 1;
  }
  return n;
}

Eigen::VectorXd to_gp(const std::vector<detail::Dimension>& dims, const std::vector<double>& x) {
  Eigen::VectorXd z = Eigen::VectorXd::Zero(gp_dims(dims));
  Eigen::Index at = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d].categorical()) {
      z[at + static_cast<Eigen::Index>(x[d])] = 1;
      at += static_cast<Eigen::Index>(dims[d].num_choices());
    } else {
      z[at++] = x[d];
    }
  }
  return z;
}

std::vector<double> from_gp(const std::vector<detail::Dimension>& dims, const Eigen::VectorXd& z) {
  std::vector<double> x(dims.size());
  Eigen::Index at = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d].categorical()) {
      const auto n = static_cast<Eigen::Index>(dims[d].num_choices());
      Eigen::Index arg;
      z.segment(at, n).maxCoeff(&arg);
      x[d] = static_cast<double>(arg);
      at += n;
    } else {
      x[d] = std::clamp(z[at++], 0.0, 1.0);
    }
  }
  return x;
}

// What the hyperparameters are fitted on: the rows of the observations used,
// their GP inputs, and which lengthscale each input shares.
struct FitData {
  const Eigen::MatrixXd& X;
  const std::vector<Eigen::Index>& rows;
  const std::vector<int>& groups;
};

// Fits theta to `targets` (one per observation) from each of `starts`.
Eigen::VectorXd fit_theta(const FitData& data, const std::vector<double>& targets,
                          const std::vector<Eigen::VectorXd>& starts, double* log_posterior) {
  Eigen::VectorXd y(data.rows.size());
  for (size_t i = 0; i < data.rows.size(); ++i) y[i] = targets[data.rows[i]];
  return GaussianProcess::fit_theta(data.X, y, starts, kFitIterations, data.groups, log_posterior);
}

struct Model {
  std::vector<double> targets;
  Eigen::VectorXd theta;
};

// The targets and hyperparameters for `losses`. For kPower, the lambda of
// the largest evidence, as gp.h says: the log posterior of the fitted theta
// plus the transform's log Jacobian, which makes fits to differently
// transformed losses comparable (a warped GP, Snelson et al. 2004). The
// normal-draws lambda alone ignores where the losses lie: on a bowl it picks
// near a log, and the GP then fits the best trial's cusp with a short
// lengthscale and sees nothing beyond the best basin. Each lambda is fitted
// from the first start; the chosen one then also from the others.
Model fit_model(const FitData& data, const std::vector<double>& losses, OutputTransform kind,
                const std::vector<Eigen::VectorXd>& starts) {
  if (kind != OutputTransform::kPower) {
    std::vector<double> targets = detail::transform_outputs(losses, kind);
    Eigen::VectorXd theta = fit_theta(data, targets, starts, nullptr);
    return {std::move(targets), std::move(theta)};
  }
  std::vector<double> lambdas{detail::normal_lambda(losses)};
  for (const double lambda : kPowerLambdas) {
    if (std::find(lambdas.begin(), lambdas.end(), lambda) == lambdas.end()) {
      lambdas.push_back(lambda);
    }
  }
  Model best;
  double best_evidence = -std::numeric_limits<double>::infinity();
  double best_jacobian = 0;
  for (const double lambda : lambdas) {
    detail::PowerTargets power = detail::power_targets(losses, lambda);
    double log_posterior;
    Eigen::VectorXd theta = fit_theta(data, power.targets, {starts.front()}, &log_posterior);
    double jacobian = 0;
    for (const Eigen::Index row : data.rows) jacobian += power.log_slope[row];
    if (log_posterior + jacobian > best_evidence || best.targets.empty()) {
      best_evidence = log_posterior + jacobian;
      best_jacobian = jacobian;
      best = {std::move(power.targets), std::move(theta)};
    }
  }
  if (starts.size() > 1) {
    double log_posterior;
    const std::vector<Eigen::VectorXd> others(starts.begin() + 1, starts.end());
    Eigen::VectorXd theta = fit_theta(data, best.targets, others, &log_posterior);
    if (log_posterior + best_jacobian > best_evidence) best.theta = std::move(theta);
  }
  return best;
}

}  // namespace

GpSearcher::GpSearcher(GpOptions options)
    : ModelBasedSearcher("gp", options.base), options_(std::move(options)) {
  if (options_.n_candidates < 1) {
    throw ConfigError(fmt::format("must be at least 1, got {}", options_.n_candidates), {}, 0,
                      "n_candidates");
  }
  if (options_.fit_restarts < 1) {
    throw ConfigError(fmt::format("must be at least 1, got {}", options_.fit_restarts), {}, 0,
                      "fit_restarts");
  }
}

std::vector<double> GpSearcher::propose(Rng& rng) {
  const auto& obs = observations();
  const auto n = static_cast<Eigen::Index>(obs.size());
  const auto& dims = encoding().dims();
  const int D = gp_dims(dims);
  std::vector<double> losses(obs.size());
  for (size_t i = 0; i < obs.size(); ++i) losses[i] = obs[i].loss;

  // Hyperparameters: on the best and the newest points when there are many.
  // (Every transform is monotone, so the best losses are the best targets.)
  std::vector<Eigen::Index> fit_rows(n);
  std::iota(fit_rows.begin(), fit_rows.end(), 0);
  if (obs.size() > kMaxFitPoints) {
    std::vector<Eigen::Index> by_value = fit_rows;
    std::sort(by_value.begin(), by_value.end(),
              [&](auto a, auto b) { return losses[a] < losses[b]; });
    std::vector<bool> take(obs.size(), false);
    for (size_t i = 0; i < kMaxFitPoints / 2; ++i) take[by_value[i]] = true;
    for (size_t i = 0, newest = 0; newest < kMaxFitPoints / 2 && i < obs.size(); ++i) {
      const size_t row = obs.size() - 1 - i;
      if (!take[row]) take[row] = true, ++newest;
    }
    fit_rows.clear();
    for (size_t i = 0; i < obs.size(); ++i) {
      if (take[i]) fit_rows.push_back(static_cast<Eigen::Index>(i));
    }
  }
  Eigen::MatrixXd Xf(fit_rows.size(), D);
  for (size_t i = 0; i < fit_rows.size(); ++i) {
    Xf.row(i) = to_gp(dims, obs[fit_rows[i]].x).transpose();
  }
  // One lengthscale per searchable dimension: a categorical's one-hot inputs
  // share one, so the kernel sees how many categoricals differ (a Hamming
  // distance, as Optuna's GPSampler and BoTorch's mixed GP do) rather than
  // fitting a lengthscale per value.
  std::vector<int> groups;
  for (size_t d = 0; d < dims.size(); ++d) {
    groups.insert(groups.end(), dims[d].categorical() ? dims[d].num_choices() : 1,
                  static_cast<int>(d));
  }
  const int G = static_cast<int>(dims.size());
  std::vector<Eigen::VectorXd> starts;
  if (theta_.size() == static_cast<size_t>(G) + 2) {
    starts.push_back(Eigen::Map<const Eigen::VectorXd>(theta_.data(), G + 2));
  }
  starts.push_back(GaussianProcess::default_theta(G));
  while (starts.size() < static_cast<size_t>(options_.fit_restarts)) {
    Eigen::VectorXd theta = GaussianProcess::default_theta(G);
    for (Eigen::Index k = 0; k < G; ++k) theta[k] += normal(rng);
    starts.push_back(theta);
  }
  starts.resize(static_cast<size_t>(options_.fit_restarts));
  const FitData data{Xf, fit_rows, groups};
  auto [targets, fitted] = fit_model(data, losses, options_.output_transform, starts);
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(targets.data(), n);
  const double best = y.minCoeff();
  theta_.assign(fitted.data(), fitted.data() + fitted.size());
  Eigen::VectorXd theta(D + 2);
  for (int k = 0; k < D; ++k) theta[k] = fitted[groups[k]];
  theta.tail(2) = fitted.tail(2);

  // The posterior: every completed trial, plus running ones at the best value.
  const auto running = this->running();
  Eigen::MatrixXd X(n + static_cast<Eigen::Index>(running.size()), D);
  Eigen::VectorXd yall(X.rows());
  for (Eigen::Index i = 0; i < n; ++i) {
    X.row(i) = to_gp(dims, obs[i].x).transpose();
    yall[i] = y[i];
  }
  for (size_t i = 0; i < running.size(); ++i) {
    X.row(n + static_cast<Eigen::Index>(i)) = to_gp(dims, running[i].x).transpose();
    yall[n + static_cast<Eigen::Index>(i)] = best;
  }
  const GaussianProcess gp(X, yall, theta);

  // Candidates: uniform; around the best five trials; and, in many
  // dimensions, around the best trial within a box whose sides follow the
  // fitted lengthscales (TuRBO's shape) at three scales, so a long
  // lengthscale's dimension moves more than a short one's.
  std::vector<Eigen::Index> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return y[a] < y[b]; });
  const auto m = static_cast<Eigen::Index>(options_.n_candidates);
  const Eigen::Index local = m / 4;
  const Eigen::Index trust =
      static_cast<int64_t>(dims.size()) >= options_.trust_region_dims ? m / 4 : 0;
  std::vector<double> box(dims.size(), kLocalSd);  // per encoded dim: the region's sd
  if (trust > 0) {
    // theta holds one lengthscale per GP input; a categorical dim's one-hot
    // inputs are not perturbed here, so their lengthscales do not count.
    double log_sum = 0;
    int numeric = 0;
    for (size_t d = 0, at = 0; d < dims.size(); ++d) {
      if (dims[d].categorical()) {
        at += dims[d].num_choices();
        continue;
      }
      box[d] = theta[static_cast<Eigen::Index>(at++)];
      log_sum += box[d];
      ++numeric;
    }
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!dims[d].categorical()) box[d] = std::exp(box[d] - log_sum / std::max(1, numeric));
    }
  }
  constexpr double kTrustScales[] = {0.2, 0.05, 0.01};
  Eigen::MatrixXd C(m, D);
  for (Eigen::Index c = 0; c < m; ++c) {
    std::vector<double> x(dims.size());
    const bool in_trust = c < trust;
    const bool near = !in_trust && c < trust + local;
    const auto& anchor =
        obs[order[in_trust ? 0 : static_cast<size_t>(c) % std::min<size_t>(5, obs.size())]].x;
    const double scale = in_trust ? kTrustScales[c % std::size(kTrustScales)] : kLocalSd;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d].categorical()) {
        const auto k = dims[d].num_choices();
        x[d] = (near || in_trust) && unit(rng) < 0.8
                   ? anchor[d]
                   : static_cast<double>(std::min<size_t>(unit(rng) * k, k - 1));
      } else if (near || in_trust) {
        const double sd = in_trust ? std::min(0.5, scale * box[d]) : kLocalSd;
        x[d] = std::clamp(anchor[d] + sd * normal(rng), 0.0, 1.0);
      } else {
        x[d] = unit(rng);
      }
    }
    C.row(c) = to_gp(dims, encoding().snap(std::move(x))).transpose();
  }
  // A config that has run or is running is passed over while another is
  // left. The constant liar lowers a running one's improvement, but a fitted
  // noise can leave it (or the best trial's config) on top, and on a lattice
  // the search would then run the best config again and again: the losses
  // are taken as deterministic, so a repeat learns nothing.
  auto taken = [&](const Eigen::VectorXd& z) {
    for (Eigen::Index r = 0; r < X.rows(); ++r) {
      if ((z - X.row(r).transpose()).cwiseAbs().maxCoeff() < 1e-9) return true;
    }
    return false;
  };
  Eigen::VectorXd score = log_ei(gp, C, best);
  for (Eigen::Index c = 0; c < m; ++c) {
    if (taken(C.row(c).transpose())) score[c] = -std::numeric_limits<double>::infinity();
  }

  // Refine the best few on the numeric inputs.
  std::vector<Eigen::Index> numeric;
  for (Eigen::Index at = 0, d = 0; d < static_cast<Eigen::Index>(dims.size()); ++d) {
    if (dims[d].categorical()) {
      at += static_cast<Eigen::Index>(dims[d].num_choices());
    } else {
      numeric.push_back(at++);
    }
  }
  // Starts: the best few overall, and the best of the uniform candidates
  // (a restart away from the best trials, where EI may hide a second basin).
  std::vector<Eigen::Index> top(m);
  std::iota(top.begin(), top.end(), 0);
  const auto refined = std::min<Eigen::Index>(kRefined, m);
  std::partial_sort(top.begin(), top.begin() + refined, top.end(),
                    [&](auto a, auto b) { return score[a] > score[b]; });
  top.resize(refined);
  if (trust + local < m) {
    Eigen::Index far;
    score.tail(m - trust - local).maxCoeff(&far);
    far += trust + local;
    if (std::find(top.begin(), top.end(), far) == top.end()) top.push_back(far);
  }
  const auto p = static_cast<Eigen::Index>(numeric.size());
  // Gradient ascent of log EI on the numeric inputs, categoricals held.
  auto refine = [&](Eigen::VectorXd& z, double& value) {
    constexpr double kH = 1e-6;
    for (int step = 0; step < kRefineSteps && p > 0; ++step) {
      Eigen::MatrixXd probe(p, D);
      for (Eigen::Index k = 0; k < p; ++k) {
        probe.row(k) = z.transpose();
        const double h = z[numeric[k]] + kH <= 1 ? kH : -kH;
        probe(k, numeric[k]) += h;
      }
      const Eigen::VectorXd probed = log_ei(gp, probe, best);
      Eigen::VectorXd grad(p);
      for (Eigen::Index k = 0; k < p; ++k) {
        const double h = z[numeric[k]] + kH <= 1 ? kH : -kH;
        grad[k] = (probed[k] - value) / h;
      }
      if (!grad.allFinite() || grad.norm() == 0) break;
      grad.normalize();
      // Step lengths along the gradient, clamped into the cube.
      constexpr double kSteps[] = {0.1, 0.03, 0.01, 0.003, 0.001};
      Eigen::MatrixXd tries(std::size(kSteps), D);
      for (size_t s = 0; s < std::size(kSteps); ++s) {
        Eigen::VectorXd t = z;
        for (Eigen::Index k = 0; k < p; ++k) {
          t[numeric[k]] = std::clamp(t[numeric[k]] + kSteps[s] * grad[k], 0.0, 1.0);
        }
        tries.row(static_cast<Eigen::Index>(s)) = t.transpose();
      }
      const Eigen::VectorXd tried = log_ei(gp, tries, best);
      Eigen::Index arg;
      if (!(tried.maxCoeff(&arg) > value + 1e-12)) break;
      z = tries.row(arg).transpose();
      value = tried[arg];
    }
  };
  // One-exchange neighbours: each other value of each categorical dim, the
  // numeric inputs held. Moves z to the best of them when it beats z.
  Eigen::Index neighbours = 0;
  for (const auto& dim : dims) {
    if (dim.categorical()) neighbours += static_cast<Eigen::Index>(dim.num_choices()) - 1;
  }
  auto exchange = [&](Eigen::VectorXd& z, double& value) {
    if (neighbours == 0) return false;
    Eigen::MatrixXd nb(neighbours, D);
    Eigen::Index row = 0;
    for (Eigen::Index at = 0, d = 0; d < static_cast<Eigen::Index>(dims.size()); ++d) {
      if (!dims[d].categorical()) {
        ++at;
        continue;
      }
      const auto k = static_cast<Eigen::Index>(dims[d].num_choices());
      for (Eigen::Index v = 0; v < k; ++v) {
        if (z[at + v] == 1) continue;
        nb.row(row) = z.transpose();
        nb.row(row).segment(at, k).setZero();
        nb(row++, at + v) = 1;
      }
      at += k;
    }
    const Eigen::VectorXd scored = log_ei(gp, nb, best);
    Eigen::Index arg;
    if (!(scored.maxCoeff(&arg) > value + 1e-12)) return false;
    z = nb.row(arg).transpose();
    value = scored[arg];
    return true;
  };
  // Each start: refine the numeric inputs, then take the best single
  // categorical change and refine again, while that raises EI. The
  // candidates flip a categorical only at random and the refinement holds
  // them, so without this a category is rarely tried together with the
  // numeric values that suit it.
  //
  // The suggestion runs at its lattice point (integers and quantized values
  // rounded), so the starts and their refinements compete there, as the
  // candidates did, and again a config taken already is passed over.
  auto snapped = [&](const Eigen::VectorXd& z) {
    return to_gp(dims, encoding().snap(from_gp(dims, z)));
  };
  Eigen::MatrixXd finals(2 * static_cast<Eigen::Index>(top.size()), D);
  for (size_t r = 0; r < top.size(); ++r) {
    Eigen::VectorXd z = C.row(top[r]).transpose();
    finals.row(static_cast<Eigen::Index>(2 * r)) = C.row(top[r]);  // at its lattice point already
    double value = score[top[r]];
    refine(z, value);
    for (int round = 0; round < kExchangeRounds && exchange(z, value); ++round) refine(z, value);
    finals.row(static_cast<Eigen::Index>(2 * r + 1)) = snapped(z).transpose();
  }
  Eigen::VectorXd final_score = log_ei(gp, finals, best);
  for (Eigen::Index f = 0; f < finals.rows(); ++f) {
    if (taken(finals.row(f).transpose())) {
      final_score[f] = -std::numeric_limits<double>::infinity();
    }
  }
  Eigen::Index chosen;
  final_score.maxCoeff(&chosen);
  return from_gp(dims, finals.row(chosen).transpose());
}

Json GpSearcher::save_model() const { return theta_.empty() ? Json() : Json(theta_); }

void GpSearcher::restore_model(const Json& state) {
  theta_ = state.is_null() ? std::vector<double>() : state.get<std::vector<double>>();
}

}  // namespace tune::search
