// MotpeSearcher: multi-objective TPE (Ozaki et al. 2020, "Multiobjective
// Tree-Structured Parzen Estimator for Computationally Expensive
// Optimization Problems"), as Optuna 3.1's TPESampler runs it for several
// objectives, over this project's Parzen estimators (search/internal/parzen.h).
//
// After n_startup_trials random configs, each suggestion splits the
// completed trials into a good group of gamma(n) = min(ceil(gamma * n),
// gamma_cap) trials and the rest: whole non-dominated ranks first
// (constrained domination, core/pareto.h: feasible trials before
// infeasible ones, those by total violation), and of the rank that does not
// fit whole, the subset adding the most hypervolume (greedy, as Optuna's
// HSSP). The good trials weigh by their hypervolume contribution within the
// group: over the largest one (weighting = "optuna", Optuna's MOTPE
// weighting, the default), or scaled to a mean of 1 ("improvement"); at
// least 1e-3 either way, so a dominated one still counts; infeasible ones in
// the good group weigh 1e-3. l(x) is fitted to the good group, g(x) to the rest and
// the running trials (constant liar: the worst, so always in the rest), and
// of n_ei_candidates draws from l the one maximising l(x) / g(x) P(x) is
// suggested.
//
// P(x), the probability of feasibility (c-TPE, Watanabe and Hutter 2023),
// is a density ratio: estimators of the feasible and of the infeasible
// completed trials, f and i, give P(x) = n_f f(x) / (n_f f(x) + n_i i(x));
// 1 until trials of both kinds have completed (feasibility = false: always
// 1, Optuna's feasible-first split alone). The good group's kernels spill
// over a constraint's edge, where the best feasible trade-offs often lie;
// P(x) keeps suggestions off the side that failed. On the constrained
// problems of benchmarks/multi_objective --hard (seeds 0..9, 200 trials) it
// takes the median feasible trials of TNK from 35.5 to 52 and of SRN from
// 72 to 131, and the median hypervolume of both up (docs/benchmarks.md).
//
// Options are TpeOptions (search/searcher_options.h), with TPE's meanings
// and defaults but two (motpe_defaults()): bandwidth = "scott" and weighting
// = "optuna". Against TPE's "neighbour" and "improvement", measured by
// benchmarks/multi_objective (20 seeds, median hypervolume after 100
// trials), they gain on all six problems there: ZDT1 6.17 against 5.76,
// ZDT2 5.30 / 4.99, ZDT3 6.18 / 5.53, DTLZ2 2.17 / 2.01, mlp_latency 59.0 /
// 58.1, cnn_latency 83.7 / 80.9. gamma = 0.1 with those two is Optuna's
// TPESampler(multivariate=True); our 0.15 measured better on five of six
// problems after 100 trials.
//
// It handles one objective too (the hypervolume of one objective is the
// distance to the reference, so the best trials weigh most), but TPE
// (search/internal/tpe.h) is the one tuned and measured for that.
#pragma once

#include "search/internal/model_based.h"

namespace tune::search {

class MotpeSearcher final : public ModelBasedSearcher {
 public:
  // Throws ConfigError (key = the option) as TpeSearcher's constructor does.
  explicit MotpeSearcher(TpeOptions options);
  std::string kind() const override { return "motpe"; }

 private:
  bool handles_several_objectives() const override { return true; }
  std::vector<double> propose(Rng& rng) override;

  TpeOptions options_;
};

}  // namespace tune::search
