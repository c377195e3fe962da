#include "search/internal/gp.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>

#include "core/errors.h"
#include "search/internal/gaussian_process.h"
#include "search/internal/normal.h"
#include "search/internal/output_transform.h"
#include "search/internal/scalarisation.h"

namespace tune::search {
namespace {

// Fitting the hyperparameters.
constexpr size_t kMaxFitPoints = 128;  // the best half and the newest half of the trials
constexpr int kFitIterations = 50;     // L-BFGS iterations per start
// Power-transform lambdas tried besides the normal-draws one: a square root
// (a bowl's loss, quadratic near the best, comes out near linear) and none.
constexpr double kPowerLambdas[] = {0.5, 1.0};

// Candidates. A quarter of them perturb the best trials and, from
// trust_region_dims dimensions on, another quarter lie in the trust region;
// the rest are uniform.
constexpr Eigen::Index kShareDivisor = 4;  // each of those shares is n_candidates / 4
constexpr size_t kLocalAnchors = 5;        // the best trials perturbed, in turn
constexpr double kLocalSd = 0.1;           // their perturbation, on the unit scale
// The trust region's sds: these scales times the region's side per dim
// (the fitted lengthscale over their geometric mean), at most kMaxTrustSd.
constexpr double kTrustScales[] = {0.2, 0.05, 0.01};
constexpr double kMaxTrustSd = 0.5;
// A perturbed candidate keeps its anchor's value of a categorical with this
// probability, else draws one uniformly.
constexpr double kKeepChoice = 0.8;
// Two GP inputs closer than this in every coordinate are the same config.
constexpr double kSameConfig = 1e-9;

// Refinement: the best kRefined candidates (and the best uniform one) climb
// log EI by projected gradient steps on the numeric inputs, alternating with
// the best single categorical change, for kExchangeRounds rounds.
constexpr int kRefined = 3;
constexpr int kRefineSteps = 20;
constexpr int kExchangeRounds = 4;
constexpr double kGradientStep = 1e-6;  // the finite difference, on the unit scale
// Step lengths tried along the normalised gradient, clamped into the cube.
constexpr double kStepLengths[] = {0.1, 0.03, 0.01, 0.003, 0.001};
// A move is taken only when it raises log EI by more than this.
constexpr double kMinGain = 1e-12;

// With several objectives, the hyperparameters are refitted when the number
// of completed trials is a multiple of this.
constexpr size_t kRefitEvery = 5;

using detail::GaussianProcess;
using detail::OutputTransform;
using detail::unit;
using Observation = ModelBasedSearcher::Observation;

double normal(Rng& rng) {
  const double u1 = unit(rng);
  const double u2 = unit(rng);
  return std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2.0 * std::numbers::pi * u2);
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

// `z` moved to its lattice point, where the config would run.
Eigen::VectorXd snapped(const detail::SpaceEncoding& encoding, const Eigen::VectorXd& z) {
  return to_gp(encoding.dims(), encoding.snap(from_gp(encoding.dims(), z)));
}

// The GP inputs of the completed trials, then of the running ones.
Eigen::MatrixXd gp_inputs(const std::vector<detail::Dimension>& dims,
                          const std::vector<Observation>& completed,
                          const std::vector<Observation>& running) {
  const auto n = static_cast<Eigen::Index>(completed.size());
  Eigen::MatrixXd X(n + static_cast<Eigen::Index>(running.size()), gp_dims(dims));
  for (Eigen::Index i = 0; i < n; ++i) X.row(i) = to_gp(dims, completed[i].x).transpose();
  for (size_t i = 0; i < running.size(); ++i) {
    X.row(n + static_cast<Eigen::Index>(i)) = to_gp(dims, running[i].x).transpose();
  }
  return X;
}

// The completed trials the hyperparameters are fitted on: all of them, or
// when there are many, the best and the newest. (Every transform is
// monotone, so the best losses are the best targets.)
std::vector<Eigen::Index> select_fit_rows(const std::vector<double>& losses) {
  std::vector<Eigen::Index> rows(losses.size());
  std::iota(rows.begin(), rows.end(), 0);
  if (losses.size() <= kMaxFitPoints) return rows;
  std::vector<Eigen::Index> by_value = rows;
  std::sort(by_value.begin(), by_value.end(),
            [&](auto a, auto b) { return losses[a] < losses[b]; });
  std::vector<bool> take(losses.size(), false);
  for (size_t i = 0; i < kMaxFitPoints / 2; ++i) take[by_value[i]] = true;
  for (size_t i = 0, newest = 0; newest < kMaxFitPoints / 2 && i < losses.size(); ++i) {
    const size_t row = losses.size() - 1 - i;
    if (!take[row]) take[row] = true, ++newest;
  }
  rows.clear();
  for (size_t i = 0; i < losses.size(); ++i) {
    if (take[i]) rows.push_back(static_cast<Eigen::Index>(i));
  }
  return rows;
}

// One lengthscale per searchable dimension: a categorical's one-hot inputs
// share one, so the kernel sees how many categoricals differ (a Hamming
// distance, as Optuna's GPSampler and BoTorch's mixed GP do) rather than
// fitting a lengthscale per value. Entry k is GP input k's dimension.
std::vector<int> lengthscale_groups(const std::vector<detail::Dimension>& dims) {
  std::vector<int> groups;
  for (size_t d = 0; d < dims.size(); ++d) {
    groups.insert(groups.end(), dims[d].categorical() ? dims[d].num_choices() : 1,
                  static_cast<int>(d));
  }
  return groups;
}

// The fit's `restarts` starts for G lengthscale groups: the last fit's theta
// when it has that shape, the default, then defaults with random
// lengthscales.
std::vector<Eigen::VectorXd> fit_starts(const std::vector<double>& last, int G, int64_t restarts,
                                        Rng& rng) {
  std::vector<Eigen::VectorXd> starts;
  if (last.size() == static_cast<size_t>(G) + 2) {
    starts.push_back(Eigen::Map<const Eigen::VectorXd>(last.data(), G + 2));
  }
  starts.push_back(GaussianProcess::default_theta(G));
  while (starts.size() < static_cast<size_t>(restarts)) {
    Eigen::VectorXd theta = GaussianProcess::default_theta(G);
    for (Eigen::Index k = 0; k < G; ++k) theta[k] += normal(rng);
    starts.push_back(theta);
  }
  starts.resize(static_cast<size_t>(restarts));
  return starts;
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
  Eigen::VectorXd theta;  // one lengthscale per group, then signal and noise
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

// The GP's theta from the fitted one: each input's group's lengthscale,
// then signal and noise.
Eigen::VectorXd per_input_theta(const Eigen::VectorXd& fitted, const std::vector<int>& groups) {
  const auto D = static_cast<int>(groups.size());
  Eigen::VectorXd theta(D + 2);
  for (int k = 0; k < D; ++k) theta[k] = fitted[groups[k]];
  theta.tail(2) = fitted.tail(2);
  return theta;
}

// Rows [0, trust) of the candidates lie in the trust region, rows
// [trust, trust + local) around the best trials, the rest are uniform.
struct CandidatePlan {
  Eigen::Index total = 0;
  Eigen::Index trust = 0;
  Eigen::Index local = 0;
};

// The trust region's side per encoded dim, TuRBO's shape: each numeric
// dim's lengthscale (theta holds one per GP input) over their geometric
// mean, so a long lengthscale's dimension moves more than a short one's.
// A categorical dim's one-hot inputs are not perturbed here, so their
// lengthscales do not count (and their entries stay kLocalSd, unused).
std::vector<double> trust_box(const std::vector<detail::Dimension>& dims,
                              const Eigen::VectorXd& theta) {
  std::vector<double> box(dims.size(), kLocalSd);
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
  return box;
}

// The candidates, as the plan says, each at its lattice point. `by_value`:
// the completed trials, best first; `box`: trust_box's sides.
Eigen::MatrixXd draw_candidates(const detail::SpaceEncoding& encoding,
                                const std::vector<Observation>& obs,
                                const std::vector<Eigen::Index>& by_value,
                                const CandidatePlan& plan, const std::vector<double>& box,
                                Rng& rng) {
  const auto& dims = encoding.dims();
  Eigen::MatrixXd C(plan.total, gp_dims(dims));
  for (Eigen::Index c = 0; c < plan.total; ++c) {
    std::vector<double> x(dims.size());
    const bool in_trust = c < plan.trust;
    const bool near = !in_trust && c < plan.trust + plan.local;
    const size_t anchor_rank =
        in_trust ? 0 : static_cast<size_t>(c) % std::min<size_t>(kLocalAnchors, obs.size());
    const auto& anchor = obs[by_value[anchor_rank]].x;
    const double scale = in_trust ? kTrustScales[c % std::size(kTrustScales)] : kLocalSd;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d].categorical()) {
        const auto k = dims[d].num_choices();
        x[d] = (near || in_trust) && unit(rng) < kKeepChoice
                   ? anchor[d]
                   : static_cast<double>(std::min<size_t>(unit(rng) * k, k - 1));
      } else if (near || in_trust) {
        const double sd = in_trust ? std::min(kMaxTrustSd, scale * box[d]) : kLocalSd;
        x[d] = std::clamp(anchor[d] + sd * normal(rng), 0.0, 1.0);
      } else {
        x[d] = unit(rng);
      }
    }
    C.row(c) = to_gp(dims, encoding.snap(std::move(x))).transpose();
  }
  return C;
}

// Where refinement starts: the best few candidates, and the best of the
// uniform ones (a restart away from the best trials, where EI may hide a
// second basin).
std::vector<Eigen::Index> refinement_starts(const Eigen::VectorXd& score,
                                            const CandidatePlan& plan) {
  const Eigen::Index m = plan.total;
  std::vector<Eigen::Index> top(m);
  std::iota(top.begin(), top.end(), 0);
  const auto refined = std::min<Eigen::Index>(kRefined, m);
  std::partial_sort(top.begin(), top.begin() + refined, top.end(),
                    [&](auto a, auto b) { return score[a] > score[b]; });
  top.resize(refined);
  const Eigen::Index uniform_from = plan.trust + plan.local;
  if (uniform_from < m) {
    Eigen::Index far;
    score.tail(m - uniform_from).maxCoeff(&far);
    far += uniform_from;
    if (std::find(top.begin(), top.end(), far) == top.end()) top.push_back(far);
  }
  return top;
}

// Log EI under the fitted GP, and the moves that climb it.
class Acquisition {
 public:
  // `taken`: the GP inputs of the configs that have run or are running.
  Acquisition(const GaussianProcess& gp, double best, const std::vector<detail::Dimension>& dims,
              const Eigen::MatrixXd& taken)
      : gp_(gp), best_(best), dims_(dims), taken_(taken), D_(gp_dims(dims)) {
    for (Eigen::Index at = 0, d = 0; d < static_cast<Eigen::Index>(dims.size()); ++d) {
      if (dims[d].categorical()) {
        at += static_cast<Eigen::Index>(dims[d].num_choices());
        neighbours_ += static_cast<Eigen::Index>(dims[d].num_choices()) - 1;
      } else {
        numeric_.push_back(at++);
      }
    }
  }

  // Log EI at each row of Q, -inf at a config that has run or is running:
  // it is passed over while another is left. The constant liar lowers a
  // running one's improvement, but a fitted noise can leave it (or the best
  // trial's config) on top, and on a lattice the search would then run the
  // best config again and again: the losses are taken as deterministic, so
  // a repeat learns nothing.
  Eigen::VectorXd score(const Eigen::MatrixXd& Q) const {
    Eigen::VectorXd out = log_ei(gp_, Q, best_);
    for (Eigen::Index r = 0; r < Q.rows(); ++r) {
      if (taken(Q.row(r).transpose())) out[r] = -std::numeric_limits<double>::infinity();
    }
    return out;
  }

  // Refines the numeric inputs, then takes the best single categorical
  // change and refines again, while that raises EI. The candidates flip a
  // categorical only at random and the refinement holds them, so without
  // this a category is rarely tried together with the numeric values that
  // suit it. `value` is log EI at z, and follows it.
  void climb(Eigen::VectorXd& z, double& value) const {
    refine(z, value);
    for (int round = 0; round < kExchangeRounds && exchange(z, value); ++round) refine(z, value);
  }

 private:
  bool taken(const Eigen::VectorXd& z) const {
    for (Eigen::Index r = 0; r < taken_.rows(); ++r) {
      if ((z - taken_.row(r).transpose()).cwiseAbs().maxCoeff() < kSameConfig) return true;
    }
    return false;
  }

  // Gradient ascent of log EI on the numeric inputs, categoricals held.
  void refine(Eigen::VectorXd& z, double& value) const {
    const auto p = static_cast<Eigen::Index>(numeric_.size());
    for (int step = 0; step < kRefineSteps && p > 0; ++step) {
      Eigen::MatrixXd probe(p, D_);
      for (Eigen::Index k = 0; k < p; ++k) {
        probe.row(k) = z.transpose();
        const double h = z[numeric_[k]] + kGradientStep <= 1 ? kGradientStep : -kGradientStep;
        probe(k, numeric_[k]) += h;
      }
      const Eigen::VectorXd probed = log_ei(gp_, probe, best_);
      Eigen::VectorXd grad(p);
      for (Eigen::Index k = 0; k < p; ++k) {
        const double h = z[numeric_[k]] + kGradientStep <= 1 ? kGradientStep : -kGradientStep;
        grad[k] = (probed[k] - value) / h;
      }
      if (!grad.allFinite() || grad.norm() == 0) break;
      grad.normalize();
      Eigen::MatrixXd tries(std::size(kStepLengths), D_);
      for (size_t s = 0; s < std::size(kStepLengths); ++s) {
        Eigen::VectorXd t = z;
        for (Eigen::Index k = 0; k < p; ++k) {
          t[numeric_[k]] = std::clamp(t[numeric_[k]] + kStepLengths[s] * grad[k], 0.0, 1.0);
        }
        tries.row(static_cast<Eigen::Index>(s)) = t.transpose();
      }
      const Eigen::VectorXd tried = log_ei(gp_, tries, best_);
      Eigen::Index arg;
      if (!(tried.maxCoeff(&arg) > value + kMinGain)) break;
      z = tries.row(arg).transpose();
      value = tried[arg];
    }
  }

  // One-exchange neighbours: each other value of each categorical dim, the
  // numeric inputs held. Moves z to the best of them when it beats z.
  bool exchange(Eigen::VectorXd& z, double& value) const {
    if (neighbours_ == 0) return false;
    Eigen::MatrixXd nb(neighbours_, D_);
    Eigen::Index row = 0;
    for (Eigen::Index at = 0, d = 0; d < static_cast<Eigen::Index>(dims_.size()); ++d) {
      if (!dims_[d].categorical()) {
        ++at;
        continue;
      }
      const auto k = static_cast<Eigen::Index>(dims_[d].num_choices());
      for (Eigen::Index v = 0; v < k; ++v) {
        if (z[at + v] == 1) continue;
        nb.row(row) = z.transpose();
        nb.row(row).segment(at, k).setZero();
        nb(row++, at + v) = 1;
      }
      at += k;
    }
    const Eigen::VectorXd scored = log_ei(gp_, nb, best_);
    Eigen::Index arg;
    if (!(scored.maxCoeff(&arg) > value + kMinGain)) return false;
    z = nb.row(arg).transpose();
    value = scored[arg];
    return true;
  }

  const GaussianProcess& gp_;
  const double best_;
  const std::vector<detail::Dimension>& dims_;
  const Eigen::MatrixXd& taken_;
  const int D_;
  std::vector<Eigen::Index> numeric_;  // the GP inputs of the numeric dims
  Eigen::Index neighbours_ = 0;        // one-exchange neighbours of any point
};

}  // namespace

GpSearcher::GpSearcher(GpOptions options)
    : ModelBasedSearcher("gp", options.base), options_(std::move(options)) {
  if (options_.n_candidates < 1) {
    throw ConfigError::at_key("n_candidates",
                              fmt::format("must be at least 1, got {}", options_.n_candidates));
  }
  if (options_.fit_restarts < 1) {
    throw ConfigError::at_key("fit_restarts",
                              fmt::format("must be at least 1, got {}", options_.fit_restarts));
  }
}

std::vector<double> GpSearcher::propose(Rng& rng) {
  const auto& obs = observations();
  const auto n = static_cast<Eigen::Index>(obs.size());
  const auto& dims = encoding().dims();
  const auto running = this->running();
  std::vector<double> losses(obs.size());
  if (objectives().size() > 1) {
    losses = detail::chebyshev_scalarisation(observed_losses(), rng);
  } else {
    for (size_t i = 0; i < obs.size(); ++i) losses[i] = obs[i].loss;
  }
  detail::penalise_infeasible(losses, observed_violations());
  const Eigen::MatrixXd X = gp_inputs(dims, obs, running);

  // The targets and hyperparameters, warm-started from the last fit's.
  const std::vector<Eigen::Index> fit_rows = select_fit_rows(losses);
  Eigen::MatrixXd Xf(fit_rows.size(), X.cols());
  for (size_t i = 0; i < fit_rows.size(); ++i) Xf.row(i) = X.row(fit_rows[i]);
  const std::vector<int> groups = lengthscale_groups(dims);
  const auto G = static_cast<int>(dims.size());
  // With several objectives each suggestion's targets differ (new weights):
  // standardised, and the hyperparameters refitted every kRefitEvery trials
  // (the inputs' relevance changes little between weights; the fit is most
  // of a suggestion's cost).
  const bool several = objectives().size() > 1;
  Model model;
  if (several && theta_.size() == static_cast<size_t>(G) + 2 && obs.size() % kRefitEvery != 0) {
    model = {detail::transform_outputs(losses, OutputTransform::kStandardise),
             Eigen::Map<const Eigen::VectorXd>(theta_.data(), G + 2)};
  } else {
    model = fit_model({Xf, fit_rows, groups}, losses,
                      several ? OutputTransform::kStandardise : options_.output_transform,
                      fit_starts(theta_, G, options_.fit_restarts, rng));
  }
  auto& [targets, fitted] = model;
  theta_.assign(fitted.data(), fitted.data() + fitted.size());
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(targets.data(), n);
  const double best = y.minCoeff();
  const Eigen::VectorXd theta = per_input_theta(fitted, groups);

  // The posterior: every completed trial, plus running ones at the best
  // value (the constant liar).
  Eigen::VectorXd yall(X.rows());
  yall.head(n) = y;
  yall.tail(X.rows() - n).setConstant(best);
  const GaussianProcess gp(X, yall, theta);
  const Acquisition acquisition(gp, best, dims, X);

  // Candidates: uniform; around the best trials; and, in many dimensions,
  // in the trust region around the best trial.
  std::vector<Eigen::Index> by_value(n);
  std::iota(by_value.begin(), by_value.end(), 0);
  std::sort(by_value.begin(), by_value.end(), [&](auto a, auto b) { return y[a] < y[b]; });
  CandidatePlan plan{.total = static_cast<Eigen::Index>(options_.n_candidates)};
  plan.local = plan.total / kShareDivisor;
  if (static_cast<int64_t>(dims.size()) >= options_.trust_region_dims) {
    plan.trust = plan.total / kShareDivisor;
  }
  const std::vector<double> box =
      plan.trust > 0 ? trust_box(dims, theta) : std::vector<double>(dims.size(), kLocalSd);
  const Eigen::MatrixXd C = draw_candidates(encoding(), obs, by_value, plan, box, rng);
  const Eigen::VectorXd score = acquisition.score(C);

  // Each start climbs; it and where it ends both compete, at their lattice
  // points (where the suggestion would run), as the candidates did.
  const std::vector<Eigen::Index> starts = refinement_starts(score, plan);
  Eigen::MatrixXd finals(2 * static_cast<Eigen::Index>(starts.size()), X.cols());
  for (size_t r = 0; r < starts.size(); ++r) {
    Eigen::VectorXd z = C.row(starts[r]).transpose();
    finals.row(static_cast<Eigen::Index>(2 * r)) = C.row(starts[r]);  // at its lattice point
    double value = score[starts[r]];
    acquisition.climb(z, value);
    finals.row(static_cast<Eigen::Index>(2 * r + 1)) = snapped(encoding(), z).transpose();
  }
  Eigen::Index chosen;
  acquisition.score(finals).maxCoeff(&chosen);
  return from_gp(dims, finals.row(chosen).transpose());
}

Json GpSearcher::save_model() const { return theta_.empty() ? Json() : Json(theta_); }

void GpSearcher::restore_model(const Json& state) {
  theta_ = state.is_null() ? std::vector<double>() : state.get<std::vector<double>>();
}

}  // namespace tune::search
