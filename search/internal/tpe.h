// TPESearcher: the Tree-structured Parzen Estimator (Bergstra et al. 2011),
// built on Optuna 3.1's TPESampler, with the joint model, kernel widths,
// weighting and split that Watanabe (2023, "Tree-Structured Parzen
// Estimator: Understanding Its Algorithm Components") recommends, as
// defaults.
//
// After n_startup_trials random configs, each suggestion splits the
// completed trials into the best gamma(n) = min(ceil(gamma * n), gamma_cap)
// ("below") and the rest ("above"), fits a Parzen estimator l(x) to each
// (search/internal/parzen.h) and returns, of n_ei_candidates draws from l,
// the one maximising l(x) / g(x).
//
// Defaults, and how they differ from Optuna's. Density for density,
// multivariate = false, weighting = "optuna", gamma = 0.1 is Optuna's
// TPESampler(), and bandwidth = "scott", weighting = "optuna", gamma = 0.1
// its TPESampler(multivariate=True):
//   multivariate  true: one joint estimator over all dims, so the model sees
//                 how parameters interact (Optuna's default is univariate:
//                 each dim on its own).
//   bandwidth     "neighbour": in joint mode each kernel's width per dim is
//                 the distance to its neighbouring observations in that dim,
//                 as univariate TPE's (at least half a step on an integer
//                 or quantized dim), and each kernel is a density (divided
//                 by its width), so a wide kernel does not outweigh a narrow
//                 one. "scott" is Optuna's joint estimator: one width per
//                 dim, 0.2 n^(-1 / (d + 4)), kernels scaled as Optuna's.
//   weighting     "improvement": the good trials weigh by how far each beats
//                 the split (threshold - value), so the best counts most;
//                 "optuna" weighs them equally, older ones less past 25.
//   gamma         0.15 (Optuna: 0.1): the joint model needs a few more good
//                 trials to spread its kernels over.
// gamma_cap (25), prior_weight (1), n_ei_candidates (24) and
// n_startup_trials (10) are Optuna's. benchmarks/search_quality measures the
// difference (--more-functions --seeds 500 --first-seed 5000): the
// defaults' median regret after 50 and after 100 trials is 0.18-0.88 of
// that of Optuna's settings on all nine functions there, among them two
// hyperparameter-like spaces where choices interact with a log-scaled rate.
//
// Log, integer and quantized domains are modelled on their own scale (see
// internal/space_encoding.h); categorical ones (choice, grid_search) with
// categorical kernels. Conditional values (sample_from) are computed from
// the chosen config.
//
// Constraints (core::kConstraintsKey), as Optuna's constrained TPE: the good
// group takes feasible trials first, then the least infeasible ones; a
// group with an infeasible trial, or split at one, weighs its members
// equally.
//
// Trials still running count as the worst value (constant liar), so trials
// suggested in parallel spread out; like Optuna, gamma(n) counts completed
// trials only. max_pending_trials() stays 1: the model learns from every
// completion, and the liar covers trials already running.
//
// Cost: the history is kept sorted (by value, by suggestion, and per
// dimension by coordinate) as trials complete, so a suggestion builds the
// large "above" estimator in one linear pass per dimension, and evaluates
// it with vector arithmetic: only near each candidate in univariate mode
// (detail::SortedKernels), over every kernel in joint mode
// (detail::JointKernels).
#pragma once

#include <memory>

#include "search/internal/model_based.h"

namespace tune::search {

namespace detail {
// Throws ConfigError (key = the option) for a non-positive candidate count,
// gamma outside (0, 1], gamma_cap < 1 or prior_weight <= 0.
void check_tpe_options(const TpeOptions& options);
// How many of n completed trials make the good group: gamma(n).
size_t tpe_good_count(const TpeOptions& options, size_t n);
// The candidate with the largest log l(x) - log g(x), the first of equals.
size_t most_promising(const std::vector<double>& log_l, const std::vector<double>& log_g);

// TPE's model over a ModelBasedSearcher's history: TpeSearcher's, and
// GP-BO's first trials' (internal/gp.h: tpe_trials).
class TpeModel {
 public:
  // Throws as TpeSearcher's constructor does.
  explicit TpeModel(TpeOptions options);
  ~TpeModel();
  TpeModel(TpeModel&&) noexcept;

  // The next point (encoded by `encoding`, the searcher's) from `searcher`'s
  // completed trials and, with the constant liar, its running ones.
  std::vector<double> propose(const ModelBasedSearcher& searcher, const SpaceEncoding& encoding,
                              Rng& rng);
  // Forgets what it derived from the history: call before the searcher's
  // observations are replaced (restore).
  void clear();

 private:
  using Observation = ModelBasedSearcher::Observation;
  struct History;  // the sorted views, scratch buffers and "above" estimators (tpe.cpp)
  struct Split;    // one suggestion's good group and the rest (tpe.cpp)

  Split split_history(const ModelBasedSearcher& searcher);
  std::vector<double> propose_joint(const Split& split, const std::vector<Dimension>& dims,
                                    Rng& rng);
  std::vector<double> propose_univariate(const Split& split, const std::vector<Observation>& obs,
                                         const std::vector<Dimension>& dims, Rng& rng);

  TpeOptions options_;
  std::unique_ptr<History> history_;  // derived from the observations, so never saved
};
}  // namespace detail

class TpeSearcher final : public ModelBasedSearcher {
 public:
  // Throws ConfigError (key = the option) for a non-positive candidate
  // count, gamma outside (0, 1], gamma_cap < 1 or prior_weight <= 0.
  explicit TpeSearcher(TpeOptions options);
  std::string kind() const override { return "tpe"; }

 private:
  std::vector<double> propose(Rng& rng) override;
  void restore_model(const Json& state) override;

  detail::TpeModel model_;
};

}  // namespace tune::search
