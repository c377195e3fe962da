#include "search/internal/tpe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/errors.h"
#include "search/internal/joint_kernels.h"
#include "search/internal/parzen.h"

namespace tune::search {

using Observation = ModelBasedSearcher::Observation;

namespace {

// The good group's weights, parallel to `below_pos` (oldest first). Optuna's
// ramp by age, or by improvement: each trial's margin over `threshold` (the
// best value of the rest), scaled to a mean of 1 so the prior keeps its
// share, with a floor so a trial tied with the threshold still counts.
std::vector<double> good_group_weights(TpeWeighting weighting, const std::vector<Observation>& obs,
                                       const std::vector<uint32_t>& below_pos, double threshold) {
  std::vector<double> w = detail::tpe_weights(below_pos.size());
  if (weighting != TpeWeighting::kImprovement) return w;
  double sum = 0;
  for (size_t i = 0; i < below_pos.size(); ++i) {
    w[i] = threshold - obs[below_pos[i]].loss;
    sum += w[i];
  }
  // No rest to beat (NaN), or infinite values: equal weights.
  if (!(std::isfinite(sum) && sum > 0)) return std::vector<double>(below_pos.size(), 1.0);
  const double scale = static_cast<double>(below_pos.size()) / sum;
  for (double& wi : w) wi = std::max(wi * scale, 1e-3);
  return w;
}

// A history position, from an entry of a sorted view.
uint32_t position_of(uint32_t p) { return p; }
uint32_t position_of(const std::pair<double, uint32_t>& entry) { return entry.second; }

}  // namespace

namespace detail {

// The candidate with the largest log l(x) - log g(x), the first of equals.
size_t most_promising(const std::vector<double>& log_l, const std::vector<double>& log_g) {
  size_t best = 0;
  for (size_t c = 1; c < log_l.size(); ++c) {
    if (log_l[c] - log_g[c] > log_l[best] - log_g[best]) best = c;
  }
  return best;
}

void check_tpe_options(const TpeOptions& options) {
  if (options.n_ei_candidates < 1) {
    throw ConfigError::at_key("n_ei_candidates",
                              fmt::format("must be at least 1, got {}", options.n_ei_candidates));
  }
  if (!(options.gamma > 0 && options.gamma <= 1)) {
    throw ConfigError::at_key("gamma", fmt::format("must lie in (0, 1], got {}", options.gamma));
  }
  if (options.gamma_cap < 1) {
    throw ConfigError::at_key("gamma_cap",
                              fmt::format("must be at least 1, got {}", options.gamma_cap));
  }
  if (!(options.prior_weight > 0) || !std::isfinite(options.prior_weight)) {
    throw ConfigError::at_key("prior_weight",
                              fmt::format("must be > 0, got {}", options.prior_weight));
  }
}

size_t tpe_good_count(const TpeOptions& options, size_t n) {
  const double count = std::min(std::ceil(options.gamma * static_cast<double>(n)),
                                static_cast<double>(options.gamma_cap));
  return std::min(static_cast<size_t>(count), n);
}

}  // namespace detail

// One suggestion's two groups. "below", the good group, oldest first
// (Optuna's weights ramp over trial order); "above", the rest of the
// history and the liars, ranked in suggestion order: a member's rank there
// is its weight's index and, in joint mode, its component's.
struct detail::TpeModel::Split {
  // Running trials: lies with the worst value, so always above.
  std::vector<Observation> liars;
  std::vector<const double*> below;  // the good group's points
  std::vector<double> below_weight;  // parallel to below
  size_t n_above = 0;                // the rest and the liars
  std::vector<double> above_weight;  // by rank (detail::tpe_weights)
  std::vector<uint32_t> liar_rank;   // parallel to liars
};

// Positions into observations(), kept sorted as trials complete (they only
// ever append), so a suggestion never sorts the history again; and the
// "above" group's estimators built from them.
struct detail::TpeModel::History {
  size_t synced = 0;               // observations already sorted in
  uint64_t version = 0;            // ModelBasedSearcher::history_version() when they were
  std::vector<uint32_t> by_loss;   // best first, ties oldest first
  std::vector<uint32_t> by_index;  // in suggestion order
  std::vector<std::vector<std::pair<double, uint32_t>>> by_value;  // per dim, ascending
  // Per dim and position: (sigma, mass on [0, 1]) of its last "above" kernel.
  std::vector<std::vector<std::pair<double, double>>> mass_memo;

  // Scratch reused across suggestions.
  std::vector<char> is_below;  // per position: in the good group
  std::vector<double> weight;  // per position: its weight in the "above" group (0 if below)
  std::vector<uint32_t> rank;  // per position: its rank in the "above" group
  std::vector<double> mu, mu_weight;
  std::vector<std::pair<double, double>*> memo;   // parallel to mu: into mass_memo, or null
  std::vector<std::pair<double, double>> values;  // (value, weight) for one dim
  std::vector<double> category_log_p;             // g's, per choice of one dim
  detail::SortedKernels above, below;
  std::vector<std::pair<double, uint32_t>> liar_values;                // (value, rank) for one dim
  std::vector<std::vector<detail::JointKernels::Coordinate>> columns;  // joint mode's g, per dim
  detail::JointKernels joint;

  void sync(const std::vector<Observation>& obs, size_t num_dims) {
    if (obs.size() < synced || by_value.size() != num_dims) clear(num_dims);
    for (; synced < obs.size(); ++synced) {
      const auto p = static_cast<uint32_t>(synced);
      const Observation& o = obs[p];
      // Feasible trials first (violation 0), then by violation (Optuna's
      // constrained TPE); each by value, ties oldest first.
      by_loss.insert(std::upper_bound(by_loss.begin(), by_loss.end(), p,
                                      [&](uint32_t a, uint32_t b) {
                                        const Observation &x = obs[a], &y = obs[b];
                                        if (x.violation != y.violation) {
                                          return x.violation < y.violation;
                                        }
                                        return x.loss != y.loss ? x.loss < y.loss
                                                                : x.index < y.index;
                                      }),
                     p);
      by_index.insert(
          std::upper_bound(by_index.begin(), by_index.end(), p,
                           [&](uint32_t a, uint32_t b) { return obs[a].index < obs[b].index; }),
          p);
      for (size_t d = 0; d < num_dims; ++d) {
        auto& v = by_value[d];
        const std::pair<double, uint32_t> entry{o.x[d], p};
        v.insert(std::upper_bound(v.begin(), v.end(), entry,
                                  [](const auto& a, const auto& b) { return a.first < b.first; }),
                 entry);
        mass_memo[d].emplace_back(-1.0, 0.0);
      }
    }
  }

  void clear(size_t num_dims) {
    synced = 0;
    by_loss.clear();
    by_index.clear();
    by_value.assign(num_dims, {});
    mass_memo.assign(num_dims, {});
  }

  // Visits the "above" group in the order of `view` (a sorted view of
  // positions, or of (value, position) entries): its entries outside the
  // good group, merged with `num_liars` liars in the same order, liar r
  // coming before an entry while liar_first(r, entry).
  template <class View, class LiarFirst, class OnEntry, class OnLiar>
  void merge_above(const View& view, size_t num_liars, LiarFirst liar_first, OnEntry on_entry,
                   OnLiar on_liar) const {
    size_t r = 0;
    for (const auto& entry : view) {
      if (is_below[position_of(entry)]) continue;
      for (; r < num_liars && liar_first(r, entry); ++r) on_liar(r);
      on_entry(entry);
    }
    for (; r < num_liars; ++r) on_liar(r);
  }

  // The "above" group in order of value in dim d: on_entry(value, position)
  // for the history's members, on_liar(value, rank) for the liars.
  template <class OnEntry, class OnLiar>
  void by_value_above(size_t d, const Split& split, OnEntry on_entry, OnLiar on_liar) {
    liar_values.clear();
    for (size_t r = 0; r < split.liars.size(); ++r) {
      liar_values.emplace_back(split.liars[r].x[d], split.liar_rank[r]);
    }
    std::sort(liar_values.begin(), liar_values.end());
    merge_above(
        by_value[d], liar_values.size(),
        [&](size_t r, const auto& entry) { return liar_values[r].first < entry.first; },
        [&](const auto& entry) { on_entry(entry.first, entry.second); },
        [&](size_t r) { on_liar(liar_values[r].first, liar_values[r].second); });
  }

  // Univariate g for numeric dim d, into `above`.
  void build_above(size_t d, const Split& split, double prior_weight) {
    mu.resize(split.n_above);
    mu_weight.resize(split.n_above);
    memo.resize(split.n_above);
    size_t i = 0;
    by_value_above(
        d, split,
        [&](double value, uint32_t p) {
          mu[i] = value;
          mu_weight[i] = weight[p];
          memo[i++] = &mass_memo[d][p];
        },
        [&](double value, uint32_t liar_rank) {
          mu[i] = value;
          mu_weight[i] = split.above_weight[liar_rank];
          memo[i++] = nullptr;
        });
    above.build(mu, mu_weight, prior_weight, memo.data());
  }

  // Univariate l for numeric dim d, into `below`, the same way (the good
  // group is small; sorting it is cheap).
  void build_below(size_t d, const Split& split, double prior_weight) {
    values.clear();
    for (size_t i = 0; i < split.below.size(); ++i) {
      values.emplace_back(split.below[i][d], split.below_weight[i]);
    }
    std::sort(values.begin(), values.end());
    mu.clear();
    mu_weight.clear();
    for (const auto& [value, w] : values) {
      mu.push_back(value);
      mu_weight.push_back(w);
    }
    below.build(mu, mu_weight, prior_weight);
  }

  // Univariate g for categorical dim d, into category_log_p: each member's
  // kernel (detail::categorical_floor) summed by choice, with the uniform
  // prior, as ParzenEstimator's mixture over them would be.
  void build_categorical_above(size_t d, const Split& split, const std::vector<Observation>& obs,
                               size_t choices, double prior_weight) {
    std::vector<double> own(choices, 0);
    double total_w = 0;
    for (uint32_t p = 0; p < obs.size(); ++p) {
      own[static_cast<size_t>(obs[p].x[d])] += weight[p];
      total_w += weight[p];
    }
    for (size_t r = 0; r < split.liars.size(); ++r) {
      const double w = split.above_weight[split.liar_rank[r]];
      own[static_cast<size_t>(split.liars[r].x[d])] += w;
      total_w += w;
    }
    const double all = total_w + prior_weight;
    const auto [floor, row_total] = detail::categorical_floor(prior_weight, split.n_above, choices);
    category_log_p.resize(choices);
    for (size_t j = 0; j < choices; ++j) {
      category_log_p[j] = std::log(
          ((total_w * floor + own[j]) / row_total + prior_weight / static_cast<double>(choices)) /
          all);
    }
  }

  // Joint mode's g over every dim: per dim, every component's coordinate;
  // numeric ones in order of value.
  void build_joint(const std::vector<detail::Dimension>& dims, const Split& split,
                   double prior_weight, detail::Bandwidth bandwidth, detail::KernelScale scale) {
    columns.resize(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) {
      auto& column = columns[d];
      column.resize(split.n_above);
      size_t i = 0;
      by_value_above(
          d, split,
          [&](double value, uint32_t p) {
            column[i++] = {value, rank[p], &mass_memo[d][p]};
          },
          [&](double value, uint32_t liar_rank) {
            column[i++] = {value, liar_rank};
          });
    }
    joint.build(dims, split.above_weight, prior_weight, bandwidth, scale, columns);
  }
};

namespace detail {

TpeModel::TpeModel(TpeOptions options)
    : options_(std::move(options)), history_(std::make_unique<History>()) {
  check_tpe_options(options_);
}

TpeModel::~TpeModel() = default;
TpeModel::TpeModel(TpeModel&&) noexcept = default;

void TpeModel::clear() { history_->clear(0); }

std::vector<double> TpeModel::propose(const ModelBasedSearcher& searcher,
                                      const SpaceEncoding& encoding, Rng& rng) {
  if (history_->version != searcher.history_version()) {
    history_->clear(encoding.size());  // values already sorted in have changed
    history_->version = searcher.history_version();
  }
  history_->sync(searcher.observations(), encoding.size());
  const Split split = split_history(searcher);
  return options_.multivariate
             ? propose_joint(split, encoding.dims(), rng)
             : propose_univariate(split, searcher.observations(), encoding.dims(), rng);
}

TpeModel::Split TpeModel::split_history(const ModelBasedSearcher& searcher) {
  History& h = *history_;
  const std::vector<Observation>& obs = searcher.observations();
  Split split;
  // gamma(n) counts completed trials only, as Optuna's does.
  if (options_.constant_liar) split.liars = searcher.running();
  const size_t n_below = detail::tpe_good_count(options_, obs.size());

  h.is_below.assign(obs.size(), 0);
  std::vector<uint32_t> below_pos(h.by_loss.begin(), h.by_loss.begin() + n_below);
  std::sort(below_pos.begin(), below_pos.end(),
            [&](uint32_t a, uint32_t b) { return obs[a].index < obs[b].index; });
  for (uint32_t p : below_pos) {
    h.is_below[p] = 1;
    split.below.push_back(obs[p].x.data());
  }
  // A margin over an infeasible trial, or an infeasible trial's, means
  // nothing: then NaN, and equal weights.
  const bool feasible_split =
      std::all_of(h.by_loss.begin(), h.by_loss.begin() + std::min(n_below + 1, obs.size()),
                  [&](uint32_t p) { return obs[p].violation == 0; });
  split.below_weight = good_group_weights(
      options_.weighting, obs, below_pos,
      n_below < obs.size() && feasible_split ? obs[h.by_loss[n_below]].loss : NAN);

  split.n_above = obs.size() - n_below + split.liars.size();
  split.above_weight = detail::tpe_weights(split.n_above);
  split.liar_rank.resize(split.liars.size());
  h.weight.assign(obs.size(), 0);
  h.rank.assign(obs.size(), 0);
  uint32_t rank = 0;
  h.merge_above(
      h.by_index, split.liars.size(),
      [&](size_t r, uint32_t p) { return split.liars[r].index < obs[p].index; },
      [&](uint32_t p) {
        h.rank[p] = rank;
        h.weight[p] = split.above_weight[rank++];
      },
      [&](size_t r) { split.liar_rank[r] = rank++; });
  return split;
}

std::vector<double> TpeModel::propose_joint(const Split& split, const std::vector<Dimension>& dims,
                                            Rng& rng) {
  // Neighbour widths vary per kernel, so the kernels are densities (a wide
  // one must not outweigh a narrow one); Scott's widths are Optuna's
  // estimator, scaled as Optuna scales it.
  const bool scott =
      options_.bandwidth == TpeBandwidth::kScott ||
      (options_.bandwidth == TpeBandwidth::kAuto && dims.size() > kAutoNeighbourDims);
  const auto bandwidth = scott ? detail::Bandwidth::kScott : detail::Bandwidth::kNeighbour;
  const auto scale = scott ? detail::KernelScale::kOptuna : detail::KernelScale::kDensity;
  const detail::ParzenEstimator l(dims, split.below, split.below_weight, options_.prior_weight,
                                  bandwidth, scale);
  std::vector<std::vector<double>> candidates;
  for (int64_t c = 0; c < options_.n_ei_candidates; ++c) candidates.push_back(l.sample_joint(rng));
  history_->build_joint(dims, split, options_.prior_weight, bandwidth, scale);
  std::vector<double> log_l, log_g;
  l.log_pdf_joint(candidates, log_l);
  history_->joint.log_pdf(candidates, log_g);
  return candidates[detail::most_promising(log_l, log_g)];
}

std::vector<double> TpeModel::propose_univariate(const Split& split,
                                                 const std::vector<Observation>& obs,
                                                 const std::vector<Dimension>& dims, Rng& rng) {
  History& h = *history_;
  const auto m = static_cast<size_t>(options_.n_ei_candidates);
  const double prior_weight = options_.prior_weight;
  const detail::ParzenEstimator l(dims, split.below, split.below_weight, prior_weight,
                                  detail::Bandwidth::kNeighbour, detail::KernelScale::kOptuna);
  // Per dimension: l from the good group, g from the sorted views.
  std::vector<double> x(dims.size());
  std::vector<double> candidates(m), log_l(m), log_g(m);
  for (size_t d = 0; d < dims.size(); ++d) {
    for (size_t c = 0; c < m; ++c) candidates[c] = l.sample_dim(d, rng);
    if (dims[d].categorical()) {
      for (size_t c = 0; c < m; ++c) log_l[c] = l.log_pdf_dim(d, candidates[c]);
      h.build_categorical_above(d, split, obs, dims[d].num_choices(), prior_weight);
      for (size_t c = 0; c < m; ++c) {
        log_g[c] = h.category_log_p[static_cast<size_t>(candidates[c])];
      }
    } else {
      h.build_above(d, split, prior_weight);
      for (size_t c = 0; c < m; ++c) log_g[c] = h.above.log_pdf(candidates[c]);
      h.build_below(d, split, prior_weight);
      for (size_t c = 0; c < m; ++c) log_l[c] = h.below.log_pdf(candidates[c]);
    }
    x[d] = candidates[detail::most_promising(log_l, log_g)];
  }
  return x;
}

}  // namespace detail

TpeSearcher::TpeSearcher(TpeOptions options)
    : ModelBasedSearcher("tpe", options.base), model_(std::move(options)) {}

std::vector<double> TpeSearcher::propose(Rng& rng) {
  return model_.propose(*this, encoding(), rng);
}

void TpeSearcher::restore_model(const Json&) {
  model_.clear();  // the observations are about to be replaced
}

}  // namespace tune::search
