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
// suggested (by the joint model; beyond 3 parameters most suggestions
// redraw part of a good trial instead, see below).
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
// and defaults but five (motpe_defaults()): bandwidth = "auto", weighting
// = "optuna", redraw_share = 0.9, redraw_ramp = 50 and univariate_share =
// 0.25. Against TPE's "neighbour" and "improvement", Scott's widths and
// Optuna's weighting measured better on all six problems of
// benchmarks/multi_objective's first family (6 to 10 parameters; 20 seeds,
// median hypervolume after 100 trials, before the redraws and the
// univariate share): ZDT1 6.17 against 5.76, ZDT2 5.30 / 4.99, ZDT3 6.18 /
// 5.53, DTLZ2 2.17 / 2.01, mlp_latency 59.0 / 58.1, cnn_latency 83.7 /
// 80.9. In two dimensions the neighbour widths do far better: on TNK and
// SRN (--hard, seeds 0..19, 200 trials) 0.581 against 0.481 and 29966
// against 29407, so "auto" takes them in up to 3 searchable dimensions and
// Scott's beyond. gamma = 0.1 with bandwidth = "scott" is Optuna's
// TPESampler(multivariate=True) (our 0.15 measured better on five of the
// first family's six problems after 100 trials); multivariate = false,
// bandwidth = "neighbour", gamma = 0.1, feasibility = false its
// TPESampler(), the MOTPE Optuna runs by default.
//
// Where the joint model has Scott's widths (beyond 3 parameters under
// "auto"), it makes few of the suggestions. Scott's widths, a fifth of the
// range, move every parameter of a good trial at once, across the many
// local fronts of a multimodal problem; Optuna's univariate model combines
// good values of each parameter found in different trials, but loses what
// the parameters do together. So:
//   - redraw_share (0.9) of the suggestions, once redraw_ramp (50) trials
//     have completed (before, in proportion to those that have), take a
//     good trial, drawn by its weight in l, and redraw some of its
//     parameters (each with probability 1 / their number, at least one)
//     with the univariate model's choice for them: the neighbour widths,
//     each parameter drawn from l's marginal and scored by l / g (times P)
//     there, as Optuna's MOTPE. What the good trial's other parameters do
//     together is kept. The ramp leaves the first suggestions to the joint
//     model: while every parameter is still far off, moving one at a time
//     is slow.
//   - univariate_share (0.25) of the rest are the univariate model's whole;
//     the others the joint model's.
// Against the joint model with a univariate quarter alone (--hard, mean of
// log(new / old) per seed, seeds 0..59 and 200..259, after 100 / 200
// trials; docs/benchmarks.md): ZDT4 +28% / +38%, DTLZ1 +19% / +12%, ZDT6
// +5% / +9%, ZDT6_in +1% / +16%, DTLZ7 -1% / +2%, DTLZ7_in -0.4% / +8%
// (standard errors 1-4%). Without the ramp ZDT6_in lost after 100 trials
// (-5.8% ± 3.0) and the others gained 1-5% more; a share of 1 lost ZDT6_in
// at 100 trials (-15.8% ± 4.8); 0.5 and 0.75 gained less on ZDT4, DTLZ1
// and DTLZ7. The first family (seeds 0..39):
// ZDT1-3 -0.3% to +3.3%, DTLZ2 -3.4% ± 1.5 / -2.6% ± 0.7, the latency
// problems -0.6% to -1.9%; with its constraint (seeds 0..19) -3.5% to
// +3.9%. In 2 parameters redraws lost TNK (-22% after 200 trials), hence
// beyond 3 only.
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
