// Hyperparameter importance: the mean decrease in impurity (MDI) of a
// random forest of regression trees fitted from the parameters to the
// metric, as Optuna's MeanDecreaseImpurityImportanceEvaluator does with
// scikit-learn's RandomForestRegressor (64 trees, depth 64, bootstrap, all
// features at each split). Each tree's impurity decreases are normalised to
// sum to 1, averaged over the trees, and normalised again. Beside it,
// fANOVA over the same trees (Optuna's default evaluator; internal/fanova.h):
// the share of each tree's variance that a parameter's main effect explains,
// averaged over the trees and normalised to sum to 1, over the box the
// trials' values span.
//
// Values are compared at one budget: a trial a scheduler cut at iteration 1
// and one that ran 100 iterations are not ranked by their last values.
// Numeric parameters enter as they are (log10 for log domains: the scale
// they were sampled on), others as the index of their value among the
// values seen. Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "dashboard/experiment_db.h"

namespace tune::dashboard {

struct ImportanceOptions {
  int num_trees = 64;        // Optuna: 64
  int max_depth = 64;        // Optuna: 64
  size_t min_trials = 8;     // fewer trials at any one budget: no importance (too few to say)
  size_t max_trials = 2000;  // a larger experiment is subsampled (seeded) to keep this under ~1 s
  uint64_t seed = 0;         // bootstrap and subsample draws
};

// {"metric", "method", "num_trials", "params": [{"name", "importance"}] best
// first, "fanova": the same for fANOVA}, from each trial's finite value of `metric` in
// last_metrics, or "params" empty and "reason" saying why when there are too few trials. `params`
// is ExperimentDb::summary()'s "params" array.
Json importance(const std::vector<TrialPoint>& trials, const Json& params,
                const std::string& metric, const ImportanceOptions& options = {});

// importance() of the values at ExperimentDb::one_budget (the highest
// training_iteration that min_trials trials reached), with "budget" naming
// that iteration (null when none has enough trials): the same answer as
// importance() of points_at_one_budget's points, the same subsample drawn,
// but only the trials drawn are read.
Json importance_at_one_budget(const ExperimentDb& db, const Json& params, const std::string& metric,
                              const ImportanceOptions& options = {});

}  // namespace tune::dashboard
