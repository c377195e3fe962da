// Hyperparameter importance: the mean decrease in impurity (MDI) of a
// random forest of regression trees fitted from the parameters to the
// metric, as Optuna's MeanDecreaseImpurityImportanceEvaluator does with
// scikit-learn's RandomForestRegressor (64 trees, depth 64, bootstrap, all
// features at each split). Each tree's impurity decreases are normalised to
// sum to 1, averaged over the trees, and normalised again.
//
// Inputs: the trials that finished (TERMINATED) with a finite value of the
// metric in their last result. Numeric parameters enter as they are (log10
// for log domains: the scale they were sampled on), others as the index of
// their value among the values seen. Thread-safe (no shared state).
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
  size_t min_trials = 8;     // fewer finished trials: no importance (too few to say anything)
  size_t max_trials = 2000;  // a larger experiment is subsampled (seeded) to keep this under ~1 s
  uint64_t seed = 0;         // bootstrap and subsample draws
};

// {"metric", "num_trials", "params": [{"name", "importance"}] best first}, or
// "params" empty and "reason" saying why when there are too few trials.
// `params` is ExperimentDb::summary()'s "params" array.
Json importance(const std::vector<TrialPoint>& trials, const Json& params,
                const std::string& metric, const ImportanceOptions& options = {});

}  // namespace tune::dashboard
