// GpSearcher: Bayesian optimisation with a Gaussian process (Eigen).
//
// After n_startup_trials random configs, each suggestion fits a GP
// (Matern-5/2, one lengthscale per searchable dimension, a categorical's
// one-hot inputs sharing theirs, hyperparameters by maximum
// marginal likelihood under weak priors: internal/gaussian_process.h) to the
// completed trials' losses passed through output_transform, and
// returns the point maximising log expected improvement over the best value
// so far. It scores n_candidates points: three quarters uniform over the
// space and a quarter perturbing the best trials (half of those the best
// five at 0.1 of each range, half the best one at 0.03 down to 0.0003); from
// trust_region_dims dimensions on, a quarter of the uniform ones instead lie
// around the best trial inside a box whose sides follow the fitted
// lengthscales (TuRBO's shape) at three scales. The best three and the best
// uniform one are then refined by projected gradient ascent on the numeric
// inputs (steps from 0.1 down to 3e-6 of a range), alternating with the
// best single categorical change (each other value of each categorical,
// numeric inputs held) while that raises EI. On functions with many local
// minima (search_quality --rugged) the fine share and steps are what let
// GP-BO finish the basin it has found within a small budget.
//
// A cold start's first trials are TPE's: with one objective and no earlier
// experiment, until tpe_trials (25) trials have completed, TPE's model
// (internal/tpe.h, TpeOptions' defaults) suggests from these observations,
// and GP-BO's from then on. With few trials on a function of many regular
// minima, a GP's fit smooths them into one trend and its improvement leads
// to that trend's minimum, often between basins; TPE's density of good
// trials spreads its suggestions over several basins, which GP-BO then
// finishes. search_quality --rugged (11 functions of 2-6 dimensions, seeds
// 0..29 and 100..129, median best after 50 trials, 0 -> 25 TPE trials):
// Griewank-6 0.915 / 0.951 -> 0.945 / 0.833 (our TPE 0.919 / 0.859), Levy-4
// 0.250 / 0.694 -> 0.303 / 0.272 (0.647 / 0.563), Rastrigin-4 15.7 / 16.5 ->
// 16.1 / 12.7 (24.5 / 20.4); at 50 trials GP-BO now beats TPE on at least
// half the seeds of every one (README.md has the table). Elsewhere: Ackley-10
// 13.6 / 17.5 -> 11.3 / 12.6; log Rosenbrock-4 at 100 trials moves both ways
// (2.70 / 3.48 -> 3.26 / 3.22; TPE 3.11 / 3.06). A config TPE repeats (it
// may, on a lattice) is GP-BO's to choose.
//
// With incumbent = "mean" (GpOptions), the improvement is over the least
// posterior mean at a completed trial instead of the best loss, and the local
// candidates lie around the trials of least posterior mean: the fit smooths
// the best trial, so its neighbourhood keeps some improvement and the search
// exploits its basin. That finishes a Griewank or Rastrigin basin sooner and
// misses a Schwefel's far best basin (searcher_options.h has the figures).
//
// The default output transform is a power transform
// (internal/output_transform.h) whose lambda the GP chooses: among the one
// under which the losses look most like normal draws, 1/2 and 1
// (standardised), the one under which the fitted GP makes the losses most
// likely (its log posterior plus the transform's log Jacobian: a warped GP's
// evidence). Losses spanning orders of magnitude come out near their
// logarithm, so the good trials stay apart and the worst do not set the
// lengthscales; a bowl-shaped loss comes out near its square root, so the
// best trial is not a cusp that collapses a lengthscale.
//
// Inputs: numeric domains on their [0, 1] scale (log for the log kinds;
// internal/space_encoding.h), rounded onto their lattice when decoded;
// categorical domains (choice, grid_search) one-hot, their value the
// largest coordinate. Candidates and refined points compete at their lattice
// points, where they would run, and a config that has run or is running is
// passed over while another is left. Running trials join the GP with the
// best value so far as their value (constant liar, "CL-min"), which flattens
// the improvement near them so parallel suggestions spread out.
//
// With several objectives (ParEGO, Knowles 2006): each suggestion draws
// weights uniformly on the simplex and models one value per trial, the
// augmented Chebyshev scalarisation max_j w_j f_j + 0.05 sum_j w_j f_j of its
// objectives, each scaled to [0, 1] between the best and worst value so far.
// Different weights pull
// successive suggestions towards different parts of the front. The
// targets are then standardised, and the hyperparameters refitted every
// fifth completed trial (warm-started; in between the last fit's serve):
// the fit is most of a suggestion's cost, and the inputs' relevance changes
// little between weights. benchmarks/multi_objective measures it against
// MOTPE and Optuna's samplers.
//
// Constraints (a result's "constraints", core/pareto.h): with one objective
// or several, a trial that breaks them is modelled as worse than every
// feasible one, by the feasible values' span times 1 plus its share of the
// largest violation, so the improvement sought is a feasible one. And once
// a trial has broken one (feasibility = true, the default), the acquisition
// is expected improvement times the probability of feasibility (Gardner et
// al. 2014, "Bayesian Optimization with Inequality Constraints"): a GP per
// constraint, fitted (its own hyperparameters, from the default start and
// fit_restarts - 1 random ones) to its standardised values at the completed
// trials, gives P(c_k(x) <= 0) = Phi(-mean / sd), and the constraints count
// as independent. The penalty alone says where trials failed; the
// constraints' GPs say how likely a new point is to fail, so the climb
// stops at a constraint's edge instead of spilling over it.
// benchmarks/multi_objective --hard (seeds 0..9, 200 trials, without ->
// with): TNK's median hypervolume 0.523 -> 0.604 and feasible trials 109.5
// -> 181.5, SRN's 28839 -> 29597 and 127 -> 190; a suggestion's CPU time
// there 17 -> 111 ms (two constraints, two more fits).
//
// Warm start (ModelBasedSearcher::warm_start): with one objective, once
// one of this run's trials has completed, the GP of the earlier
// experiment's trials alone is the prior mean of this run's function, and
// this run's trials fit a GP of how the function departs from it
// (internal/gp_fit.h: fit_departure; its hyperparameters fitted from the
// function's). A function shifted a little since departs by a smooth
// function, so a few repeated configs move the whole neighbourhood the
// earlier trials describe, and only this run's values say where the best
// now is (the improvement sought is over this run's best). The search is
// then a refinement of a neighbourhood the earlier run already found, to
// the precision it reached there (on Branin within 1e-5 of the optimum's
// value, some 1e-4 of each range): the candidates' anchors lead with this
// run's best, and the fine local candidates and climb steps (as in any
// run) reach that precision. With several objectives, or before this run has
// a value, the earlier trials join the GP as measured with an extra noise
// variance, the mean squared difference of the targets at the configs run
// in both experiments. benchmarks/warm_start (median trials to the first
// run's final best, seeds 0..9): Branin 21.5 and hpo_mixed 6.5 (cold 54
// and 61). Before a cold run's first trials were TPE's: 28.5 and 8.5 (cold
// 55 and 61, measured when a cold run searched coarsely: local candidates
// at 0.1 of each range, steps down to 1e-3); searched that coarsely, 37.5
// and 8 (seeds 10..19: 36.5 and 7); with the extra noise alone, 41.5 and
// 35; a departure GP fitted from the default start instead: Branin 50.5;
// one kernel over both runs with the correlation the repeats imply
// (coregionalisation): neither within 60 trials.
//
// Cost grows as n^3 in completed trials: hyperparameters are fitted on at
// most 128 of them (the 64 best and the 64 newest), the posterior uses all.
// benchmarks/search_quality prints the CPU time per suggestion with 100,
// 200 and 1000 completed trials.
#pragma once

#include <vector>

#include "search/internal/model_based.h"
#include "search/internal/output_transform.h"
#include "search/internal/tpe.h"

namespace tune::search {

class GpSearcher final : public ModelBasedSearcher {
 public:
  // Throws ConfigError (key = the option) for n_candidates < 1 or
  // fit_restarts < 1.
  explicit GpSearcher(GpOptions options);
  std::string kind() const override { return "gp"; }

 private:
  bool handles_several_objectives() const override { return true; }
  std::vector<double> propose(Rng& rng) override;
  Json save_model() const override;
  void restore_model(const Json& state) override;

  GpOptions options_;
  detail::TpeModel tpe_;       // the first trials' model (GpOptions::tpe_trials)
  std::vector<double> theta_;  // the last fit's hyperparameters: the next fit's warm start
};

}  // namespace tune::search
