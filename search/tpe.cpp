#include "search/tpe.h"

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

// Positions into observations(), kept sorted as trials complete (they only
// ever append), so a suggestion never sorts the history again.
struct TpeSearcher::History {
  size_t synced = 0;                                               // observations already sorted in
  std::vector<uint32_t> by_loss;                                   // best first, ties oldest first
  std::vector<uint32_t> by_index;                                  // in suggestion order
  std::vector<std::vector<std::pair<double, uint32_t>>> by_value;  // per dim, ascending
  // Per dim and position: (sigma, mass on [0, 1]) of its last "above" kernel.
  std::vector<std::vector<std::pair<double, double>>> mass_memo;

  // Scratch reused across suggestions.
  std::vector<char> is_below;
  std::vector<double> weight;  // per position: its weight in the "above" group
  std::vector<uint32_t> rank;  // per position: its rank in the "above" group (joint mode)
  std::vector<double> mu, mu_weight;
  std::vector<std::pair<double, double>*> memo;   // parallel to mu: into mass_memo, or null
  std::vector<std::pair<double, double>> values;  // (value, weight) for one dim
  detail::SortedKernels above, below;
  std::vector<std::pair<double, uint32_t>> liar_values;                // (value, rank) for one dim
  std::vector<std::vector<detail::JointKernels::Coordinate>> columns;  // joint mode's g, per dim
  detail::JointKernels joint;

  void sync(const std::vector<Observation>& obs, size_t num_dims) {
    if (obs.size() < synced || by_value.size() != num_dims) clear(num_dims);
    for (; synced < obs.size(); ++synced) {
      const auto p = static_cast<uint32_t>(synced);
      const Observation& o = obs[p];
      by_loss.insert(std::upper_bound(by_loss.begin(), by_loss.end(), p,
                                      [&](uint32_t a, uint32_t b) {
                                        return obs[a].loss != obs[b].loss
                                                   ? obs[a].loss < obs[b].loss
                                                   : obs[a].index < obs[b].index;
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
};

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

}  // namespace

TpeSearcher::TpeSearcher(TpeOptions options)
    : ModelBasedSearcher("tpe", options.base),
      options_(std::move(options)),
      history_(std::make_unique<History>()) {
  if (options_.n_ei_candidates < 1) {
    throw ConfigError(fmt::format("must be at least 1, got {}", options_.n_ei_candidates), {}, 0,
                      "n_ei_candidates");
  }
  if (!(options_.gamma > 0 && options_.gamma <= 1)) {
    throw ConfigError(fmt::format("must lie in (0, 1], got {}", options_.gamma), {}, 0, "gamma");
  }
  if (options_.gamma_cap < 1) {
    throw ConfigError(fmt::format("must be at least 1, got {}", options_.gamma_cap), {}, 0,
                      "gamma_cap");
  }
  if (!(options_.prior_weight > 0) || !std::isfinite(options_.prior_weight)) {
    throw ConfigError(fmt::format("must be > 0, got {}", options_.prior_weight), {}, 0,
                      "prior_weight");
  }
}

TpeSearcher::~TpeSearcher() = default;

void TpeSearcher::restore_model(const Json&) {
  history_->clear(encoding().size());  // the observations are about to be replaced
}

std::vector<double> TpeSearcher::propose(Rng& rng) {
  History& h = *history_;
  const std::vector<Observation>& obs = observations();
  h.sync(obs, encoding().size());

  // Running trials are lies: the worst value, so always in the "above"
  // group. gamma(n) counts completed trials only, as Optuna's does.
  std::vector<Observation> liars;
  if (options_.constant_liar) liars = running();
  const auto n = static_cast<double>(obs.size());
  const auto n_below =
      std::min<size_t>(static_cast<size_t>(std::min(std::ceil(options_.gamma * n),
                                                    static_cast<double>(options_.gamma_cap))),
                       obs.size());

  // The good group, oldest first (Optuna's weights ramp over trial order).
  h.is_below.assign(obs.size(), 0);
  std::vector<uint32_t> below_pos(h.by_loss.begin(), h.by_loss.begin() + n_below);
  std::sort(below_pos.begin(), below_pos.end(),
            [&](uint32_t a, uint32_t b) { return obs[a].index < obs[b].index; });
  std::vector<const double*> below;
  for (uint32_t p : below_pos) {
    h.is_below[p] = 1;
    below.push_back(obs[p].x.data());
  }
  const std::vector<double> below_weight =
      good_group_weights(options_.weighting, obs, below_pos,
                         n_below < obs.size() ? obs[h.by_loss[n_below]].loss : NAN);

  // The rest and the liars, merged in suggestion order: their rank there is
  // their weight's index and, in joint mode, their component's.
  const size_t n_above = obs.size() - n_below + liars.size();
  const std::vector<double> w = detail::tpe_weights(n_above);
  h.weight.assign(obs.size(), 0);
  h.rank.assign(obs.size(), 0);
  std::vector<double> liar_weight(liars.size());
  std::vector<uint32_t> liar_rank(liars.size());
  {
    uint32_t rank = 0;
    size_t r = 0;
    for (uint32_t p : h.by_index) {
      if (h.is_below[p]) continue;
      for (; r < liars.size() && liars[r].index < obs[p].index; ++r) {
        liar_rank[r] = rank;
        liar_weight[r] = w[rank++];
      }
      h.rank[p] = rank;
      h.weight[p] = w[rank++];
    }
    for (; r < liars.size(); ++r) {
      liar_rank[r] = rank;
      liar_weight[r] = w[rank++];
    }
  }

  const auto& dims = encoding().dims();
  const auto m = static_cast<size_t>(options_.n_ei_candidates);
  // Joint mode: neighbour widths vary per kernel, so the kernels are
  // densities (a wide one must not outweigh a narrow one); Scott's widths
  // are Optuna's estimator, scaled as Optuna scales it.
  const bool scott = options_.bandwidth == TpeBandwidth::kScott;
  const auto bandwidth = scott ? detail::Bandwidth::kScott : detail::Bandwidth::kNeighbour;
  const auto scale = scott ? detail::KernelScale::kOptuna : detail::KernelScale::kDensity;

  if (options_.multivariate) {
    const detail::ParzenEstimator l(dims, below, below_weight, options_.prior_weight, bandwidth,
                                    scale);
    std::vector<std::vector<double>> candidates;
    for (size_t c = 0; c < m; ++c) candidates.push_back(l.sample_joint(rng));
    // g's columns: per dim, every component's coordinate; numeric ones in
    // order of value (the sorted view less the good group, merged with the
    // liars).
    h.columns.resize(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) {
      auto& column = h.columns[d];
      h.liar_values.clear();
      for (size_t r = 0; r < liars.size(); ++r) {
        h.liar_values.emplace_back(liars[r].x[d], liar_rank[r]);
      }
      std::sort(h.liar_values.begin(), h.liar_values.end());
      column.resize(n_above);
      size_t i = 0, r = 0;
      for (const auto& [value, p] : h.by_value[d]) {
        if (h.is_below[p]) continue;
        for (; r < h.liar_values.size() && h.liar_values[r].first < value; ++r) {
          column[i++] = {h.liar_values[r].first, h.liar_values[r].second};
        }
        column[i++] = {value, h.rank[p], &h.mass_memo[d][p]};
      }
      for (; r < h.liar_values.size(); ++r) {
        column[i++] = {h.liar_values[r].first, h.liar_values[r].second};
      }
    }
    h.joint.build(dims, w, options_.prior_weight, bandwidth, scale, h.columns);
    std::vector<double> log_l, log_g;
    l.log_pdf_joint(candidates, log_l);
    h.joint.log_pdf(candidates, log_g);
    size_t best = 0;
    for (size_t c = 1; c < m; ++c) {
      if (log_l[c] - log_g[c] > log_l[best] - log_g[best]) best = c;
    }
    return candidates[best];
  }

  const detail::ParzenEstimator l(dims, below, below_weight, options_.prior_weight,
                                  detail::Bandwidth::kNeighbour, detail::KernelScale::kOptuna);
  // Univariate: per dimension, g built from the sorted views.
  std::vector<double> x(dims.size());
  std::vector<double> candidates(m), category_log_p;
  for (size_t d = 0; d < dims.size(); ++d) {
    for (size_t c = 0; c < m; ++c) candidates[c] = l.sample_dim(d, rng);
    std::vector<double> log_g(m), log_l(m);
    if (dims[d].categorical()) {
      for (size_t c = 0; c < m; ++c) log_l[c] = l.log_pdf_dim(d, candidates[c]);
      // Each component puts 1 on its own choice over a floor of
      // prior_weight / (n + 1) on every choice (as ParzenEstimator).
      const size_t choices = dims[d].num_choices();
      std::vector<double> own(choices, 0);
      double total_w = 0;
      for (uint32_t p = 0; p < obs.size(); ++p) {
        own[static_cast<size_t>(obs[p].x[d])] += h.weight[p];
        total_w += h.weight[p];
      }
      for (size_t r = 0; r < liars.size(); ++r) {
        own[static_cast<size_t>(liars[r].x[d])] += liar_weight[r];
        total_w += liar_weight[r];
      }
      const double all = total_w + options_.prior_weight;
      const double floor = options_.prior_weight / static_cast<double>(n_above + 1);
      const double row_total = floor * static_cast<double>(choices) + 1;
      category_log_p.resize(choices);
      for (size_t j = 0; j < choices; ++j) {
        category_log_p[j] = std::log(((total_w * floor + own[j]) / row_total +
                                      options_.prior_weight / static_cast<double>(choices)) /
                                     all);
      }
      for (size_t c = 0; c < m; ++c) {
        log_g[c] = category_log_p[static_cast<size_t>(candidates[c])];
      }
    } else {
      // The rest, in order of value: the sorted view less the good group,
      // merged with the liars.
      h.values.clear();
      for (size_t r = 0; r < liars.size(); ++r)
        h.values.emplace_back(liars[r].x[d], liar_weight[r]);
      std::sort(h.values.begin(), h.values.end());
      const size_t k = n_above;
      h.mu.resize(k);
      h.mu_weight.resize(k);
      h.memo.resize(k);
      size_t i = 0, r = 0;
      for (const auto& [value, p] : h.by_value[d]) {
        if (h.is_below[p]) continue;
        for (; r < h.values.size() && h.values[r].first < value; ++r, ++i) {
          h.mu[i] = h.values[r].first;
          h.mu_weight[i] = h.values[r].second;
          h.memo[i] = nullptr;
        }
        h.mu[i] = value;
        h.mu_weight[i] = h.weight[p];
        h.memo[i++] = &h.mass_memo[d][p];
      }
      for (; r < h.values.size(); ++r, ++i) {
        h.mu[i] = h.values[r].first;
        h.mu_weight[i] = h.values[r].second;
        h.memo[i] = nullptr;
      }
      h.above.build(h.mu, h.mu_weight, options_.prior_weight, h.memo.data());
      for (size_t c = 0; c < m; ++c) log_g[c] = h.above.log_pdf(candidates[c]);

      // l, the same way (the good group is small; sorting it is cheap).
      h.values.clear();
      for (size_t i = 0; i < below.size(); ++i) h.values.emplace_back(below[i][d], below_weight[i]);
      std::sort(h.values.begin(), h.values.end());
      h.mu.clear();
      h.mu_weight.clear();
      for (const auto& [value, weight] : h.values) {
        h.mu.push_back(value);
        h.mu_weight.push_back(weight);
      }
      h.below.build(h.mu, h.mu_weight, options_.prior_weight);
      for (size_t c = 0; c < m; ++c) log_l[c] = h.below.log_pdf(candidates[c]);
    }
    size_t best = 0;
    double best_score = -std::numeric_limits<double>::infinity();
    for (size_t c = 0; c < m; ++c) {
      const double score = log_l[c] - log_g[c];
      if (c == 0 || score > best_score) {
        best = c;
        best_score = score;
      }
    }
    x[d] = candidates[best];
  }
  return x;
}

}  // namespace tune::search
