#include "search/internal/gp_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "search/internal/gaussian_process.h"
#include "search/internal/output_transform.h"
#include "search/internal/space_encoding.h"

namespace tune::search::detail {
namespace {

constexpr size_t kMaxFitPoints = 128;  // the best half and the newest half of the trials
constexpr int kFitIterations = 50;     // L-BFGS iterations per start
// Power-transform lambdas tried besides the normal-draws one: a square root
// (a bowl's loss, quadratic near the best, comes out near linear) and none.
constexpr double kPowerLambdas[] = {0.5, 1.0};

// Two GP inputs closer than this in every coordinate are the same config.
constexpr double kRepeatedConfig = 1e-9;
// The prior trials' extra noise is at least this (in target units, where
// the targets' variance is about 1): a function that seems not to have
// moved at three configs may have moved elsewhere.
constexpr double kMinPriorNoise = 1e-3;
// The departure from the earlier trials' model is standardised by its sd,
// at least this (target units): a function that has not moved at all has
// no sd to divide by.
constexpr double kMinDepartureScale = 1e-3;

// Fits theta to `targets` (one per observation) from each of `starts`.
Eigen::VectorXd fit_theta(const FitData& data, const std::vector<double>& targets,
                          const std::vector<Eigen::VectorXd>& starts, double* log_posterior) {
  Eigen::VectorXd y(data.rows.size());
  for (size_t i = 0; i < data.rows.size(); ++i) y[i] = targets[data.rows[i]];
  const Eigen::VectorXd all = prior_noise(targets, data.repeats);
  Eigen::VectorXd extra;
  if (all.size() > 0) {
    extra.resize(static_cast<Eigen::Index>(data.rows.size()));
    for (size_t i = 0; i < data.rows.size(); ++i) extra[i] = all[data.rows[i]];
  }
  return GaussianProcess::fit_theta(data.X, y, starts, kFitIterations, data.groups, log_posterior,
                                    extra);
}

}  // namespace

Repeats find_repeats(const std::vector<ModelBasedSearcher::Observation>& obs) {
  Repeats out;
  for (size_t i = 0; i < obs.size(); ++i) {
    if (obs[i].prior) out.prior_rows.push_back(static_cast<Eigen::Index>(i));
  }
  if (out.prior_rows.empty()) return out;
  for (size_t j = 0; j < obs.size(); ++j) {
    if (obs[j].prior) continue;
    for (const Eigen::Index i : out.prior_rows) {
      const auto& a = obs[i].x;
      const auto& b = obs[j].x;
      bool same = true;
      for (size_t d = 0; d < a.size() && same; ++d) same = std::abs(a[d] - b[d]) < kRepeatedConfig;
      if (same) out.pairs.emplace_back(i, static_cast<Eigen::Index>(j));
    }
  }
  return out;
}

Eigen::VectorXd prior_noise(const std::vector<double>& targets, const Repeats& repeats) {
  if (repeats.pairs.empty()) return {};
  double squares = 0;
  for (const auto& [i, j] : repeats.pairs) squares += std::pow(targets[i] - targets[j], 2);
  const double extra =
      std::max(kMinPriorNoise, squares / static_cast<double>(repeats.pairs.size()));
  Eigen::VectorXd out = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(targets.size()));
  for (const Eigen::Index row : repeats.prior_rows) out[row] = extra;
  return out;
}

Departure fit_departure(const Eigen::MatrixXd& X, Eigen::Index n,
                        const std::vector<double>& targets, const Repeats& repeats,
                        const Eigen::VectorXd& theta, const std::vector<int>& groups,
                        const std::vector<Eigen::VectorXd>& starts) {
  const auto old = static_cast<Eigen::Index>(repeats.prior_rows.size());
  Eigen::MatrixXd Xold(old, X.cols());
  Eigen::VectorXd yold(old);
  std::vector<bool> prior(static_cast<size_t>(n), false);
  for (Eigen::Index i = 0; i < old; ++i) {
    const Eigen::Index row = repeats.prior_rows[static_cast<size_t>(i)];
    Xold.row(i) = X.row(row);
    yold[i] = targets[static_cast<size_t>(row)];
    prior[static_cast<size_t>(row)] = true;
  }
  Departure out;
  out.prior.base = std::make_shared<GaussianProcess>(std::move(Xold), yold, theta);
  std::vector<Eigen::Index>& own = out.own;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!prior[static_cast<size_t>(i)]) own.push_back(i);
  }
  Eigen::MatrixXd Xown(static_cast<Eigen::Index>(own.size()), X.cols());
  Eigen::VectorXd yown(Xown.rows());
  for (size_t i = 0; i < own.size(); ++i) {
    Xown.row(static_cast<Eigen::Index>(i)) = X.row(own[i]);
    yown[static_cast<Eigen::Index>(i)] = targets[static_cast<size_t>(own[i])];
  }
  Eigen::VectorXd base, ignored;
  out.prior.base->predict(Xown, base, ignored);
  Eigen::VectorXd departure = yown - base;
  out.prior.offset = departure.mean();
  departure.array() -= out.prior.offset;
  out.prior.scale = std::max(kMinDepartureScale, std::sqrt(departure.squaredNorm() /
                                                           static_cast<double>(departure.size())));
  departure /= out.prior.scale;
  // Fitted on at most kMaxFitPoints of them, as the function's fit is.
  const std::vector<Eigen::Index> rows =
      select_fit_rows(std::vector<double>(yown.data(), yown.data() + yown.size()));
  Eigen::MatrixXd Xfit(static_cast<Eigen::Index>(rows.size()), X.cols());
  Eigen::VectorXd yfit(Xfit.rows());
  for (size_t i = 0; i < rows.size(); ++i) {
    Xfit.row(static_cast<Eigen::Index>(i)) = Xown.row(rows[i]);
    yfit[static_cast<Eigen::Index>(i)] = departure[rows[i]];
  }
  out.theta = GaussianProcess::fit_theta(Xfit, yfit, starts, kFitIterations, groups);
  return out;
}

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

std::vector<Eigen::VectorXd> fit_starts(const std::vector<double>& last, int G, int64_t restarts,
                                        Rng& rng) {
  std::vector<Eigen::VectorXd> starts;
  if (last.size() == static_cast<size_t>(G) + 2) {
    starts.push_back(Eigen::Map<const Eigen::VectorXd>(last.data(), G + 2));
  }
  starts.push_back(GaussianProcess::default_theta(G));
  while (starts.size() < static_cast<size_t>(restarts)) {
    Eigen::VectorXd theta = GaussianProcess::default_theta(G);
    for (Eigen::Index k = 0; k < G; ++k) theta[k] += normal_draw(rng);
    starts.push_back(theta);
  }
  starts.resize(static_cast<size_t>(restarts));
  return starts;
}

Model fit_model(const FitData& data, const std::vector<double>& losses, OutputTransform kind,
                const std::vector<Eigen::VectorXd>& starts) {
  if (kind != OutputTransform::kPower) {
    std::vector<double> targets = transform_outputs(losses, kind);
    Eigen::VectorXd theta = fit_theta(data, targets, starts, nullptr);
    return {std::move(targets), std::move(theta)};
  }
  std::vector<double> lambdas{normal_lambda(losses)};
  for (const double lambda : kPowerLambdas) {
    if (std::find(lambdas.begin(), lambdas.end(), lambda) == lambdas.end()) {
      lambdas.push_back(lambda);
    }
  }
  Model best;
  double best_evidence = -std::numeric_limits<double>::infinity();
  double best_jacobian = 0;
  for (const double lambda : lambdas) {
    PowerTargets power = power_targets(losses, lambda);
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

}  // namespace tune::search::detail
