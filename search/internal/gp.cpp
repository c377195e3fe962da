#include "search/internal/gp.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

#include "core/errors.h"
#include "search/internal/gaussian_process.h"
#include "search/internal/gp_acquisition.h"
#include "search/internal/gp_candidates.h"
#include "search/internal/gp_fit.h"
#include "search/internal/gp_inputs.h"
#include "search/internal/output_transform.h"
#include "search/internal/scalarisation.h"

namespace tune::search {
namespace {

// With several objectives, the hyperparameters are refitted when the number
// of completed trials is a multiple of this.
constexpr size_t kRefitEvery = 5;

using detail::Acquisition;
using detail::GaussianProcess;
using detail::Model;
using detail::OutputTransform;
using Observation = ModelBasedSearcher::Observation;

// Whether the encoded point `x` is the config of one of `trials`.
bool among(const std::vector<double>& x, const std::vector<Observation>& trials) {
  return std::any_of(trials.begin(), trials.end(),
                     [&](const Observation& t) { return detail::same_point(t.x, x); });
}

// The probability of feasibility's models (internal/gp.h): a GP per
// constraint, fitted to its standardised values at the completed trials
// (rows `fit_rows` of X for the hyperparameters, as the objective's). None
// until a trial has broken a constraint. A value that is not a number (or a
// constraint a trial did not report) counts as the largest reported one.
std::vector<detail::ConstraintModel> fit_constraints(const std::vector<Observation>& obs,
                                                     const Eigen::MatrixXd& X,
                                                     const detail::FitData& fit, int G,
                                                     int64_t restarts, Rng& rng) {
  size_t count = 0;
  bool broken = false;
  for (const Observation& o : obs) {
    count = std::max(count, o.constraints.size());
    broken = broken || o.violation > 0;
  }
  std::vector<detail::ConstraintModel> out;
  if (!broken) return out;
  const auto n = static_cast<Eigen::Index>(obs.size());
  for (size_t k = 0; k < count; ++k) {
    Eigen::VectorXd c(n);
    double worst = -std::numeric_limits<double>::infinity();
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto& values = obs[static_cast<size_t>(i)].constraints;
      c[i] = k < values.size() ? values[k] : NAN;
      if (std::isfinite(c[i])) worst = std::max(worst, c[i]);
    }
    if (!std::isfinite(worst)) worst = 1;
    for (Eigen::Index i = 0; i < n; ++i) {
      if (!std::isfinite(c[i])) c[i] = worst;
    }
    const double mean = c.mean();
    double sd = std::sqrt((c.array() - mean).square().mean());
    if (!(sd > 1e-300)) sd = 1;
    const Eigen::VectorXd y = (c.array() - mean) / sd;
    const std::vector<double> targets(y.data(), y.data() + n);
    const detail::Model m = detail::fit_model(fit, targets, detail::OutputTransform::kStandardise,
                                              detail::fit_starts({}, G, restarts, rng));
    const Eigen::VectorXd fitted = Eigen::Map<const Eigen::VectorXd>(m.targets.data(), n);
    out.push_back(
        {GaussianProcess(X.topRows(n), fitted, detail::per_input_theta(m.theta, fit.groups),
                         detail::prior_noise(m.targets, fit.repeats)),
         -mean / sd});
  }
  return out;
}

}  // namespace

GpSearcher::GpSearcher(GpOptions options)
    : ModelBasedSearcher("gp", options.base), options_(std::move(options)), tpe_(TpeOptions{}) {
  if (options_.n_candidates < 1) {
    throw ConfigError::at_key("n_candidates",
                              fmt::format("must be at least 1, got {}", options_.n_candidates));
  }
  if (options_.fit_restarts < 1) {
    throw ConfigError::at_key("fit_restarts",
                              fmt::format("must be at least 1, got {}", options_.fit_restarts));
  }
  if (options_.tpe_trials < 0) {
    throw ConfigError::at_key("tpe_trials",
                              fmt::format("must be at least 0, got {}", options_.tpe_trials));
  }
}

std::vector<double> GpSearcher::propose(Rng& rng) {
  const auto& obs = observations();
  // The first trials of a cold start are TPE's (GpOptions::tpe_trials); a
  // config it repeats (TPE may, on a lattice; GP-BO passes over configs
  // that have run) is GP-BO's to choose.
  const bool cold = std::none_of(obs.begin(), obs.end(), [](const auto& o) { return o.prior; });
  if (cold && objectives().size() == 1 && static_cast<int64_t>(obs.size()) < options_.tpe_trials) {
    std::vector<double> x = encoding().snap(tpe_.propose(*this, encoding(), rng));
    if (!among(x, obs) && !among(x, running())) return x;
  }
  using Clock = std::chrono::steady_clock;
  const auto fit_start = Clock::now();  // the model fit: up to the posterior
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
  const Eigen::MatrixXd X = detail::gp_inputs(dims, obs, running);

  // The targets and hyperparameters, warm-started from the last fit's.
  const std::vector<Eigen::Index> fit_rows = detail::select_fit_rows(losses);
  Eigen::MatrixXd Xf(fit_rows.size(), X.cols());
  for (size_t i = 0; i < fit_rows.size(); ++i) Xf.row(i) = X.row(fit_rows[i]);
  const std::vector<int> groups = detail::lengthscale_groups(dims);
  const detail::Repeats repeats = detail::find_repeats(obs);
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
    model = detail::fit_model({Xf, fit_rows, groups, repeats}, losses,
                              several ? OutputTransform::kStandardise : options_.output_transform,
                              detail::fit_starts(theta_, G, options_.fit_restarts, rng));
  }
  auto& [targets, fitted] = model;
  theta_.assign(fitted.data(), fitted.data() + fitted.size());
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(targets.data(), n);
  const Eigen::VectorXd theta = detail::per_input_theta(fitted, groups);
  const auto own = n - static_cast<Eigen::Index>(repeats.prior_rows.size());
  const bool departure = !several && !repeats.prior_rows.empty() && own > 0;

  // The best value so far: this run's own when the model is of its departure
  // (an earlier trial's value is the earlier function's).
  double best = y.minCoeff();
  // The posterior: every completed trial, plus running ones at the best
  // value (the constant liar). After a warm start, with one objective, this
  // run's trials only, departing from the earlier trials' model.
  const GaussianProcess gp = [&] {
    const Eigen::Index running = X.rows() - n;
    if (!departure) {
      Eigen::VectorXd yall(X.rows());
      yall.head(n) = y;
      yall.tail(running).setConstant(best);
      return GaussianProcess(X, yall, theta, detail::prior_noise(targets, repeats));
    }
    detail::Departure d =
        detail::fit_departure(X, n, targets, repeats, theta, groups,
                              detail::fit_starts(theta_, G, options_.fit_restarts, rng));
    Eigen::MatrixXd Xown(own + running, X.cols());
    Eigen::VectorXd yown(Xown.rows());
    for (Eigen::Index i = 0; i < own; ++i) {
      Xown.row(i) = X.row(d.own[static_cast<size_t>(i)]);
      yown[i] = y[d.own[static_cast<size_t>(i)]];
    }
    best = yown.head(own).minCoeff();
    Xown.bottomRows(running) = X.bottomRows(running);
    yown.tail(running).setConstant(best);
    return GaussianProcess(std::move(Xown), yown, detail::per_input_theta(d.theta, groups), {},
                           std::move(d.prior));
  }();
  const std::vector<detail::ConstraintModel> constraints =
      options_.feasibility
          ? fit_constraints(obs, X, {Xf, fit_rows, groups, repeats}, G, options_.fit_restarts, rng)
          : std::vector<detail::ConstraintModel>();
  note_model_fit(std::chrono::duration<double>(Clock::now() - fit_start).count());

  // Candidates: uniform; around the best trials; and, in many dimensions,
  // in the trust region around the best trial.
  std::vector<Eigen::Index> by_value(n);
  std::iota(by_value.begin(), by_value.end(), 0);
  std::sort(by_value.begin(), by_value.end(), [&](auto a, auto b) { return y[a] < y[b]; });
  if (departure) {  // this run's best leads: the earlier values are the earlier function's
    const auto own_best = std::find_if(by_value.begin(), by_value.end(),
                                       [&](Eigen::Index i) { return !obs[i].prior; });
    std::rotate(by_value.begin(), own_best, own_best + 1);
  }
  // With incumbent = "mean": improvement over the least posterior mean at a
  // completed trial (of this run's), and the local candidates around the
  // trials of least posterior mean.
  if (options_.incumbent == GpIncumbent::kMean) {
    Eigen::VectorXd mean, var;
    gp.predict(X.topRows(n), mean, var);
    best = std::numeric_limits<double>::infinity();
    for (Eigen::Index i = 0; i < n; ++i) {
      if (!(departure && obs[i].prior)) best = std::min(best, mean[i]);
    }
    std::stable_sort(by_value.begin(), by_value.end(),
                     [&](auto a, auto b) { return mean[a] < mean[b]; });
    if (departure) {
      const auto own_best = std::find_if(by_value.begin(), by_value.end(),
                                         [&](Eigen::Index i) { return !obs[i].prior; });
      std::rotate(by_value.begin(), own_best, own_best + 1);
    }
  }
  const detail::CandidatePlan plan = detail::plan_candidates(
      options_.n_candidates, static_cast<int64_t>(dims.size()) >= options_.trust_region_dims);
  const std::vector<double> box =
      plan.trust > 0 ? detail::trust_box(dims, theta) : detail::local_box(dims);
  const Eigen::MatrixXd C = detail::draw_candidates(encoding(), obs, by_value, plan, box, rng);

  const Acquisition acquisition(gp, best, dims, X, constraints);
  const Eigen::VectorXd score = acquisition.score(C);

  // Each start climbs; it and where it ends both compete, at their lattice
  // points (where the suggestion would run), as the candidates did.
  const std::vector<Eigen::Index> starts = detail::refinement_starts(score, plan);
  Eigen::MatrixXd finals(2 * static_cast<Eigen::Index>(starts.size()), X.cols());
  for (size_t r = 0; r < starts.size(); ++r) {
    Eigen::VectorXd z = C.row(starts[r]).transpose();
    finals.row(static_cast<Eigen::Index>(2 * r)) = C.row(starts[r]);  // at its lattice point
    double value = score[starts[r]];
    acquisition.climb(z, value);
    finals.row(static_cast<Eigen::Index>(2 * r + 1)) = detail::snapped(encoding(), z).transpose();
  }
  Eigen::Index chosen;
  acquisition.score(finals).maxCoeff(&chosen);
  return detail::from_gp(dims, finals.row(chosen).transpose());
}

Json GpSearcher::save_model() const { return theta_.empty() ? Json() : Json(theta_); }

void GpSearcher::restore_model(const Json& state) {
  tpe_.clear();  // the observations are about to be replaced
  theta_ = state.is_null() ? std::vector<double>() : state.get<std::vector<double>>();
}

}  // namespace tune::search
