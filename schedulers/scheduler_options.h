// The options of the trial schedulers (Ray Tune's constructor arguments, with
// Ray's defaults noted), apart from the scheduler classes, so that a config
// (tune/tune_config.h) names them without the schedulers' internals. Each
// scheduler's header says what the options mean together.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/types.h"

namespace tune::schedulers {

// ASHA (schedulers/internal/asha.h).
struct AshaOptions {
  std::string time_attr = "training_iteration";  // Ray: "training_iteration"; must not decrease
  std::string metric;                            // Ray: None -> the experiment's metric
  std::optional<Mode> mode;                      // Ray: None -> the experiment's mode
  double max_t = 100;                            // Ray: 100; trials stop at max_t time units
  double grace_period = 1;                       // Ray: 1; no trial stops before this
  double reduction_factor = 4;                   // Ray: 4; keeps 1/rf of a rung
  int64_t brackets = 1;                          // Ray: 1; >1 spreads trials by softmax of rungs
  bool stop_last_trials = true;                  // Ray: True; false lets the best run past max_t
  bool promotion = false;  // not in Ray: pause at rungs and promote the best (see above)
  uint64_t seed = 0;       // Ray draws brackets from np.random; ours is seeded
};

// MO-ASHA (schedulers/internal/mo_asha.h), for several objectives: the
// experiment's, ranked at each rung by non-dominated sorting.
struct MoAshaOptions {
  std::string time_attr = "training_iteration";  // as ASHA's
  double max_t = 100;                            // as ASHA's: trials stop at max_t
  double grace_period = 1;                       // as ASHA's: no trial stops before this
  double reduction_factor = 4;                   // as ASHA's: keeps 1/rf of a rung
};

// HyperBand (schedulers/internal/hyperband.h).
struct HyperBandOptions {
  std::string time_attr = "training_iteration";  // Ray: "training_iteration"
  std::string metric;                            // Ray: None -> the experiment's metric
  std::optional<Mode> mode;                      // Ray: None -> the experiment's mode
  double max_t = 81;                             // Ray: 81; the largest milestone
  double reduction_factor = 3;                   // Ray: 3 (eta)
  bool stop_last_trials = true;                  // Ray: True; false: the last ones run on
  // true: as Ray's HyperBandForBOHB (and BOHB's HyperBand), a band opens
  // its largest bracket first (most trials, smallest first milestone) and
  // choose_trial_to_run serves brackets in that order, not the least
  // complete first (internal/hyperband.h says where it still departs from Ray's).
  // Either way a bracket takes exactly n0 trials, halves once all of them
  // came and reached the milestone, or, when no trial waits to start, halves
  // as it is once the controller has paused all its trials. On
  // benchmarks/multi_fidelity with BOHB (40 seeds; 3 dev, 7 held-out seed
  // sets), largest first reaches ASHA's final best in 0.15-0.28 of ASHA's
  // iterations on faithful curves (s = 0 first: 0.76-0.89 at 256 trials,
  // never at 128); on crossing curves, whose low rungs mislead, in 0.60-0.89
  // at 256 trials (s = 0 first: 0.45-0.70) and never at 128 (s = 0 first:
  // 0.68-0.98 on 8 of the 10 sets).
  bool for_bohb = false;
  // true: asynchronous HyperBand (Li et al., arXiv:1810.05934), as
  // DEHB and Optuna's HyperbandPruner pair it with a model: ASHA's stopping
  // rule over HyperBand's brackets (Ray's AsyncHyperBandScheduler with
  // brackets = HyperBand's count, grace_period = its smallest milestone,
  // reduction_factor = eta; internal/hyperband.h, make_hyperband_scheduler). A trial
  // joins one bracket (drawn as Ray does, which gives each about HyperBand's
  // share of trials) and is judged at each milestone as it reaches it, so no
  // trial waits for a bracket to fill and model-suggested trials reach max_t
  // early. for_bohb is then moot. On benchmarks/multi_fidelity, BOHB with it
  // needs fewer iterations than with for_bohb to reach ASHA's final best on
  // crossing curves (19 of 20 seed sets and trial counts), more on faithful
  // ones (all 20: 0.52-1.34 of ASHA's, against 0.15-0.28).
  bool asynchronous = false;
  uint64_t seed = 0;  // asynchronous only: seeds the bracket draws
};

// The median stopping rule (schedulers/internal/median_stopping.h).
struct MedianStoppingOptions {
  std::string time_attr = "time_total_s";  // Ray: "time_total_s"
  std::string metric;                      // Ray: None -> the experiment's metric
  std::optional<Mode> mode;                // Ray: None -> the experiment's mode
  double grace_period = 60;                // Ray: 60.0; no stop before, means start here
  int64_t min_samples_required = 3;        // Ray: 3; other trials needed for a median
  double min_time_slice = 0;               // Ray: 0; run at least this long between yields
  bool hard_stop = true;                   // Ray: True; false pauses instead of stopping
};

// Population-based training (schedulers/internal/pbt.h).
struct PbtOptions {
  std::string time_attr = "time_total_s";  // Ray: "time_total_s"
  std::string metric;                      // Ray: None -> the experiment's metric
  std::optional<Mode> mode;                // Ray: None -> the experiment's mode
  double perturbation_interval = 60;       // Ray: 60.0, in time_attr units (iterations if
                                           // time_attr = "training_iteration")
  double burn_in_period = 0;               // Ray: 0.0; no perturbation before
  // Ray: required unless custom_explore_fn. Per key: a list of values
  // (resample or move to a neighbour), a domain {"loguniform": [lo, hi]}
  // (resample or multiply by a factor) or a nested table.
  Json hyperparam_mutations = Json::object();
  double quantile_fraction = 0.25;                     // Ray: 0.25; in [0, 0.5]
  double resample_probability = 0.25;                  // Ray: 0.25
  std::vector<double> perturbation_factors{1.2, 0.8};  // Ray: (1.2, 0.8)
  // Ray: None. Applied to the explored config; C++ only (not in TOML).
  std::function<Json(Json config)> custom_explore_fn;
  bool synch = false;  // Ray: False; true waits for all trials at each point
  uint64_t seed = 0;   // Ray uses the global `random`; ours is seeded
};

// PB2, PBT with a GP-bandit explore step (schedulers/internal/pb2.h).
struct Pb2Options {
  std::string time_attr = "time_total_s";  // Ray: "time_total_s"
  std::string metric;                      // Ray: None -> the experiment's metric
  std::optional<Mode> mode;                // Ray: None -> the experiment's mode
  double perturbation_interval = 60;       // Ray: 60.0
  double burn_in_period = 0;               // Ray's PBT: 0.0 (PB2 passes the default)
  // Ray: required. {"lr": [1e-4, 1e-1]}: per key, [lower, upper] with lower < upper.
  Json hyperparam_bounds = Json::object();
  double quantile_fraction = 0.25;  // Ray: 0.25
  bool synch = false;               // Ray: False
  uint64_t seed = 0;                // seeds the UCB's random starts and donor choice
};

}  // namespace tune::schedulers
