#include "search/internal/motpe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>

#include "core/errors.h"
#include "core/pareto.h"
#include "search/internal/parzen.h"
#include "search/internal/tpe.h"

namespace tune::search {
namespace {

using Observation = ModelBasedSearcher::Observation;

// The floor of a good trial's weight (the group's mean weight is 1).
constexpr double kWeightFloor = 1e-3;

// The good group: `n_below` indices into `losses`, whole ranks first, then
// the hypervolume subset of the rank that does not fit (of an infeasible
// rank, whose members tie, the oldest).
std::vector<size_t> good_group(const std::vector<core::Point>& losses,
                               const std::vector<double>& violation, size_t n_below) {
  const auto by_rank = core::nondominated_fronts(losses, violation);
  std::vector<size_t> below;
  for (const std::vector<size_t>& members : by_rank) {
    const size_t room = n_below - below.size();
    if (room == 0) break;
    if (members.size() <= room) {
      below.insert(below.end(), members.begin(), members.end());
      continue;
    }
    if (violation[members[0]] > 0) {
      below.insert(below.end(), members.begin(), members.begin() + static_cast<ptrdiff_t>(room));
      break;
    }
    std::vector<core::Point> rank_losses;
    for (size_t i : members) rank_losses.push_back(losses[i]);
    const auto picked =
        core::hypervolume_subset(losses, members, room, core::reference_beyond(rank_losses));
    below.insert(below.end(), picked.begin(), picked.end());
    break;
  }
  std::sort(below.begin(), below.end());
  return below;
}

// The good trials' weights, parallel to `below`: each feasible one's
// hypervolume contribution within the group, over the largest ("optuna") or
// scaled to a mean of 1 ("improvement"), and floored; infeasible ones the
// floor.
std::vector<double> good_weights(const std::vector<Observation>& obs,
                                 const std::vector<size_t>& below, TpeWeighting weighting) {
  std::vector<core::Point> feasible;
  for (size_t i : below) {
    if (obs[i].violation == 0) feasible.push_back(obs[i].losses);
  }
  std::vector<double> w(below.size(), kWeightFloor);
  if (feasible.empty()) return w;
  const auto contribution =
      core::hypervolume_contributions(feasible, core::reference_beyond(feasible));
  const double sum = std::accumulate(contribution.begin(), contribution.end(), 0.0);
  const double max = *std::max_element(contribution.begin(), contribution.end());
  const double scale = !(std::isfinite(sum) && sum > 0)          ? 0
                       : weighting == TpeWeighting::kImprovement ? feasible.size() / sum
                                                                 : 1 / max;
  size_t f = 0;
  for (size_t j = 0; j < below.size(); ++j) {
    if (obs[below[j]].violation != 0) continue;
    // No volume to share (a single objective's ties): equal weights.
    w[j] = scale > 0 ? std::max(contribution[f] * scale, kWeightFloor) : 1.0;
    ++f;
  }
  return w;
}

// The probability of feasibility, as a density ratio (c-TPE, Watanabe and
// Hutter 2023): of the completed trials, the feasible ones' estimator f(x)
// and the infeasible ones' i(x), each with the prior; P(x) = n_f f(x) /
// (n_f f(x) + n_i i(x)). A suggestion's score adds log P(x) to log l(x) -
// log g(x), so the good group's density is not spent where constraints
// failed before. Absent (every factor 0) until both kinds have been seen.
class Feasibility {
 public:
  Feasibility(const std::vector<Observation>& obs, const std::vector<detail::Dimension>& dims,
              double prior_weight, detail::Bandwidth bandwidth, detail::KernelScale scale) {
    std::vector<const double*> feasible, infeasible;
    for (const Observation& o : obs) {
      (o.violation > 0 ? infeasible : feasible).push_back(o.x.data());
    }
    if (feasible.empty() || infeasible.empty()) return;
    log_n_f_ = std::log(static_cast<double>(feasible.size()));
    log_n_i_ = std::log(static_cast<double>(infeasible.size()));
    f_.emplace(dims, feasible, std::vector<double>(feasible.size(), 1.0), prior_weight, bandwidth,
               scale);
    i_.emplace(dims, infeasible, std::vector<double>(infeasible.size(), 1.0), prior_weight,
               bandwidth, scale);
  }

  bool active() const { return f_.has_value(); }

  // Adds log P(x) of each candidate to `score`.
  void add_joint(const std::vector<std::vector<double>>& candidates,
                 std::vector<double>& score) const {
    if (!active()) return;
    std::vector<double> log_f, log_i;
    f_->log_pdf_joint(candidates, log_f);
    i_->log_pdf_joint(candidates, log_i);
    for (size_t c = 0; c < candidates.size(); ++c) score[c] += log_p(log_f[c], log_i[c]);
  }

  // Adds log P(x_d) in dim d alone (univariate mode: each dim on its own).
  void add_dim(size_t d, const std::vector<double>& candidates, std::vector<double>& score) const {
    if (!active()) return;
    for (size_t c = 0; c < candidates.size(); ++c) {
      score[c] += log_p(f_->log_pdf_dim(d, candidates[c]), i_->log_pdf_dim(d, candidates[c]));
    }
  }

 private:
  double log_p(double log_f, double log_i) const {
    const double a = log_n_f_ + log_f, b = log_n_i_ + log_i;
    return a - (std::max(a, b) + std::log1p(std::exp(-std::abs(a - b))));
  }

  std::optional<detail::ParzenEstimator> f_, i_;
  double log_n_f_ = 0, log_n_i_ = 0;
};

// Optuna's univariate suggestion: each dimension's value the best of
// `m` draws from l's marginal by l / g there (times P there).
std::vector<double> propose_univariate(const detail::ParzenEstimator& l,
                                       const detail::ParzenEstimator& g,
                                       const Feasibility& feasibility, size_t num_dims, size_t m,
                                       Rng& rng) {
  std::vector<double> x(num_dims), candidates(m), log_l(m), log_g(m);
  for (size_t d = 0; d < num_dims; ++d) {
    for (size_t c = 0; c < m; ++c) {
      candidates[c] = l.sample_dim(d, rng);
      log_l[c] = l.log_pdf_dim(d, candidates[c]);
      log_g[c] = g.log_pdf_dim(d, candidates[c]);
    }
    feasibility.add_dim(d, candidates, log_l);
    x[d] = candidates[detail::most_promising(log_l, log_g)];
  }
  return x;
}

// True with probability `p` (no draw for 0 or 1, so a share of 0 leaves
// the other suggestions as they were).
bool chance(double p, Rng& rng) {
  return p >= 1 || (p > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < p);
}

// `good` with each parameter taken from `univariate` with probability 1 /
// the number of parameters, and one at random when none was.
std::vector<double> redrawn(std::vector<double> good, const std::vector<double>& univariate,
                            Rng& rng) {
  const double p = 1.0 / static_cast<double>(good.size());
  bool any = false;
  for (size_t d = 0; d < good.size(); ++d) {
    if (chance(p, rng)) {
      good[d] = univariate[d];
      any = true;
    }
  }
  if (!any) {
    const size_t d = std::uniform_int_distribution<size_t>(0, good.size() - 1)(rng);
    good[d] = univariate[d];
  }
  return good;
}

}  // namespace

MotpeSearcher::MotpeSearcher(TpeOptions options)
    : ModelBasedSearcher("motpe", options.base), options_(std::move(options)) {
  detail::check_tpe_options(options_);
  for (const auto& [key, share] : {std::pair{"redraw_share", options_.redraw_share},
                                   std::pair{"univariate_share", options_.univariate_share}}) {
    if (!(share >= 0 && share <= 1)) {
      throw ConfigError::at_key(key, fmt::format("must lie in [0, 1], got {}", share));
    }
  }
  if (options_.redraw_ramp < 0) {
    throw ConfigError::at_key(
        "redraw_ramp", fmt::format("must be at least 0 trials, got {}", options_.redraw_ramp));
  }
}

std::vector<double> MotpeSearcher::propose(Rng& rng) {
  const std::vector<Observation>& obs = observations();
  const std::vector<size_t> below = good_group(observed_losses(), observed_violations(),
                                               detail::tpe_good_count(options_, obs.size()));
  std::vector<const double*> below_points;
  for (size_t i : below) below_points.push_back(obs[i].x.data());
  const std::vector<double> below_weights = good_weights(obs, below, options_.weighting);

  // The rest and the liars, in suggestion order (older ones weigh less
  // past 25, as TPE's).
  std::vector<Observation> liars = options_.constant_liar ? running() : std::vector<Observation>();
  std::vector<const Observation*> above;
  std::vector<char> is_below(obs.size(), 0);
  for (size_t i : below) is_below[i] = 1;
  for (size_t i = 0; i < obs.size(); ++i) {
    if (!is_below[i]) above.push_back(&obs[i]);
  }
  for (const Observation& o : liars) above.push_back(&o);
  std::stable_sort(above.begin(), above.end(),
                   [](const Observation* a, const Observation* b) { return a->index < b->index; });
  std::vector<const double*> above_points;
  for (const Observation* o : above) above_points.push_back(o->x.data());
  const std::vector<double> above_weights = detail::tpe_weights(above.size());

  const auto& dims = encoding().dims();
  const bool scott =
      options_.bandwidth == TpeBandwidth::kScott ||
      (options_.bandwidth == TpeBandwidth::kAuto && dims.size() > kAutoNeighbourDims);
  const auto bandwidth = scott ? detail::Bandwidth::kScott : detail::Bandwidth::kNeighbour;
  const auto scale = options_.multivariate && !scott ? detail::KernelScale::kDensity
                                                     : detail::KernelScale::kOptuna;
  const Feasibility feasibility =
      options_.feasibility ? Feasibility(obs, dims, options_.prior_weight, bandwidth, scale)
                           : Feasibility({}, dims, options_.prior_weight, bandwidth, scale);
  const auto m = static_cast<size_t>(options_.n_ei_candidates);
  // The univariate model makes the suggestion when multivariate = false,
  // and where the joint model has Scott's widths, for shares of them: one
  // redrawing part of a good trial, or one whole (motpe.h). Then its widths
  // are the neighbour ones; P(x) is as the joint model has it, dimension by
  // dimension.
  const double ramp = options_.redraw_ramp > 0 ? static_cast<double>(options_.redraw_ramp) : 1;
  const double redraw_share =
      options_.redraw_share * std::min(1.0, static_cast<double>(obs.size()) / ramp);
  const bool redraw = options_.multivariate && scott && chance(redraw_share, rng);
  if (!options_.multivariate || redraw || (scott && chance(options_.univariate_share, rng))) {
    const auto own = options_.multivariate ? detail::Bandwidth::kNeighbour : bandwidth;
    const detail::ParzenEstimator l(dims, below_points, below_weights, options_.prior_weight, own,
                                    detail::KernelScale::kOptuna);
    const detail::ParzenEstimator g(dims, above_points, above_weights, options_.prior_weight, own,
                                    detail::KernelScale::kOptuna);
    std::vector<double> x = propose_univariate(l, g, feasibility, dims.size(), m, rng);
    if (!redraw) return x;
    std::discrete_distribution<size_t> pick(below_weights.begin(), below_weights.end());
    return redrawn(obs[below[pick(rng)]].x, x, rng);
  }
  const detail::ParzenEstimator l(dims, below_points, below_weights, options_.prior_weight,
                                  bandwidth, scale);
  const detail::ParzenEstimator g(dims, above_points, above_weights, options_.prior_weight,
                                  bandwidth, scale);
  std::vector<std::vector<double>> candidates;
  for (size_t c = 0; c < m; ++c) candidates.push_back(l.sample_joint(rng));
  std::vector<double> log_l(m), log_g(m);
  l.log_pdf_joint(candidates, log_l);
  g.log_pdf_joint(candidates, log_g);
  feasibility.add_joint(candidates, log_l);
  return candidates[detail::most_promising(log_l, log_g)];
}

}  // namespace tune::search
