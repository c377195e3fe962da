// The options of the model-based searchers (TPE, GP-BO), apart from the
// searcher classes, so that a config (tune/tune_config.h) names them without
// the searchers' internals. search/internal/tpe.h and search/internal/gp.h say what they mean.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/types.h"

namespace tune::search {

struct ModelBasedOptions {
  int64_t num_samples = 1;               // configs to suggest in all; -1 = unlimited
  uint64_t seed = 0;                     // the same seed gives the same configs
  int64_t n_startup_trials = 10;         // random configs first (Optuna's default)
  std::vector<Json> points_to_evaluate;  // suggested first, in order; may be partial
};

// TPE (search/internal/tpe.h).
// kAuto: kNeighbour in up to kAutoNeighbourDims searchable dimensions,
// kScott beyond (search/internal/motpe.h says what it measured).
enum class TpeBandwidth { kNeighbour, kScott, kAuto };
inline constexpr size_t kAutoNeighbourDims = 3;
enum class TpeWeighting { kImprovement, kOptuna };

struct TpeOptions {
  ModelBasedOptions base;        // budget, seed, n_startup_trials (10), points_to_evaluate
  int64_t n_ei_candidates = 24;  // draws from l(x) scored per suggestion (Optuna)
  double gamma = 0.15;           // fraction of trials in the good group (Optuna: 0.1)
  int64_t gamma_cap = 25;        // at most this many trials in the good group (Optuna)
  double prior_weight = 1.0;     // weight of the prior component (Optuna)
  bool multivariate = true;      // joint estimator over all dims (Optuna: False)
  TpeBandwidth bandwidth = TpeBandwidth::kNeighbour;    // joint mode's widths (Optuna: Scott's)
  TpeWeighting weighting = TpeWeighting::kImprovement;  // of the good group (Optuna: equal)
  bool constant_liar = true;  // running trials count as worst (Optuna: False; on here
                              // because the controller runs trials in parallel)
  // MOTPE only: scores candidates by their probability of feasibility too,
  // once trials of both kinds have completed (Optuna: none, a feasible-first
  // split alone).
  bool feasibility = true;
  // MOTPE only, where the joint model has Scott's widths: the share of
  // suggestions that take a good trial (drawn by its weight in l(x)) and
  // redraw some of its parameters (each with probability 1 / the number of
  // parameters, at least one) with the univariate model's choice for them.
  double redraw_share = 0;
  // MOTPE only: the completed trials over which the redraws' share grows
  // from 0 to redraw_share, in proportion (0: the whole share at once).
  int64_t redraw_ramp = 50;
  // MOTPE only, where the joint model has Scott's widths: of the
  // suggestions not redrawn, the share made by the univariate model instead
  // of the joint one (neighbour widths, each parameter drawn and scored on
  // its own, as Optuna's MOTPE).
  double univariate_share = 0;
};

// MOTPE (search/internal/motpe.h) takes TPE's options, with four defaults
// of its own: bandwidth = "auto" (Scott's beyond 3 dimensions), weighting =
// "optuna" (each good trial's hypervolume contribution over the largest, as
// Optuna's MOTPE), redraw_share = 0.9 (reached after redraw_ramp = 50
// completed trials) and univariate_share = 0.25.
inline TpeOptions motpe_defaults() {
  TpeOptions o;
  o.bandwidth = TpeBandwidth::kAuto;
  o.weighting = TpeWeighting::kOptuna;
  o.redraw_share = 0.9;
  o.univariate_share = 0.25;
  return o;
}

// NSGA-II (search/internal/nsga2.h), for several objectives.
enum class NsgaCrossover { kSbx, kUniform };

struct Nsga2Options {
  ModelBasedOptions base;        // budget, seed, points_to_evaluate (n_startup_trials unused)
  int64_t population_size = 50;  // random configs first, then the elite kept (Optuna: 50)
  double crossover_prob = 0.9;   // a child crosses two parents, else copies one (Optuna)
  double mutation_prob = -1;     // per parameter; < 0: 1 / number of parameters (Optuna)
  NsgaCrossover crossover = NsgaCrossover::kUniform;  // numeric parameters (Optuna's)
  double swapping_prob = 0.5;  // uniform crossover's, and categorical parameters' (Optuna)
  double eta_crossover = 15;   // SBX's distribution index: larger, children nearer parents
  double eta_mutation = 20;    // polynomial mutation's, likewise (pymoo's defaults)
};

// GP-BO (search/internal/gp.h). What the GP fits: search/internal/output_transform.h
// says what each transform does to the losses, search/internal/gp.h how GP-BO picks
// the power transform's lambda.
enum class OutputTransform { kStandardise, kPower, kRank };
// The value GP-BO's expected improvement is measured from (search/internal/gp.h).
enum class GpIncumbent { kBest, kMean };

struct GpOptions {
  ModelBasedOptions base;       // budget, seed, n_startup_trials (10, Optuna's GPSampler)
  int64_t n_candidates = 1000;  // acquisition evaluations before refinement
  int64_t fit_restarts = 2;     // L-BFGS starts per fit: the last fit's result, the
                                // default, then random ones
  OutputTransform output_transform = OutputTransform::kPower;  // the targets the GP fits
  // The trust region's quarter of the candidates joins from this many
  // searchable dimensions on. Measured on search_quality's functions (2 to 6
  // dims, seeds 100..108) it helped Ackley-5 and cost elsewhere
  // (hpo_mixed's median best after 50 trials 0.40 against 0.05), so it is
  // kept for the higher dimensions TuRBO was made for. There (search_quality
  // --high-dims, seeds 1000..1009, median best after 50 / 100 trials, with /
  // without it): Ackley-10 13.5 / 5.35 against 12.4 / 6.01, log Rosenbrock-10
  // 8.11 / 5.37 against 8.46 / 6.98.
  int64_t trust_region_dims = 8;
  // "best": improvement over the best loss observed. "mean": over the least
  // posterior mean at a completed trial, with the local candidates around
  // the trials of least posterior mean; the GP's fit smooths the best trial,
  // so its own neighbourhood keeps some improvement and the search exploits
  // the basin it is in. Measured (search_quality --rugged, median best after
  // 50 / 100 trials, seeds 0..29 and 100..129, "best" -> "mean"): griewank6
  // 0.915 -> 0.890 and 0.951 -> 0.887 at 50 (our TPE 0.919, 0.859), 0.756 ->
  // 0.686 and 0.752 -> 0.684 at 100; rastrigin4 15.7 -> 12.1 and 16.4 -> 13.9
  // at 50; but schwefel2, whose trend leads away from its best basin, 0.002
  // -> 65.8 and 1.08 -> 118.4 at 100 (TPE 3.2, 119.1): hence not the default.
  GpIncumbent incumbent = GpIncumbent::kBest;
  // With one objective and no warm start, TPE's model (TpeOptions'
  // defaults) suggests until this many trials have completed, GP-BO's from
  // then on (search/internal/gp.h says why and what it measured). 0: GP-BO's
  // from the end of the start-up phase; 25 took search_quality --rugged's
  // Griewank-6 at 50 trials from 0.951 to 0.833 and Levy-4 from 0.694 to
  // 0.272 (seeds 100..129; our TPE 0.859, 0.563).
  int64_t tpe_trials = 25;
  // Constraints: besides modelling a broken trial as worse than every
  // feasible one, multiplies expected improvement by the probability of
  // feasibility, from a GP per constraint (internal/gp.h), once a trial has
  // broken one.
  bool feasibility = true;
};

// BOHB (search/internal/bohb.h).
struct BohbOptions {
  ModelBasedOptions base;                        // budget, seed, points_to_evaluate
  std::string time_attr = "training_iteration";  // the budget each result is at
  int64_t min_points_in_model = 0;               // results a budget needs; 0: dims + 2
  double top_fraction = 0.15;                    // BOHB's top_n_percent = 15
  double random_fraction = 1.0 / 3;              // BOHB's default
  int64_t n_candidates = 64;                     // BOHB's num_samples
};

}  // namespace tune::search
