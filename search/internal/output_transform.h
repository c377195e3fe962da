// How GP-BO turns observed losses into the targets its Gaussian process
// fits. A GP with a stationary kernel and Gaussian noise expects targets of
// one scale; objectives are often skewed (a valley whose walls are 1e6 high,
// an error rate that saturates), and standardising alone then squeezes the
// good points together and lets the worst ones set the lengthscales.
//
//   kStandardise  (y - mean) / sd.
//   kPower        a power transform, as scikit-learn's PowerTransformer
//                 (HEBO does the same): Box-Cox on (y - min) + shift, with
//                 shift a small fraction of the range so the best value
//                 stays finite, then standardised. transform_outputs takes
//                 the lambda in [-2, 2] under which the targets look most
//                 like independent normal draws: values spanning orders of
//                 magnitude come out near their logarithm, values already
//                 Gaussian near unchanged (lambda ~ 1). GP-BO also weighs
//                 other lambdas by how well its GP fits them (search/internal/gp.h).
//   kRank         the copula transform: the normal quantile of each value's
//                 rank, (rank + 0.5) / n (Salinas et al. 2020): order only.
//
// All are monotone: the best loss stays the best target.
#pragma once

#include <vector>

#include "search/searcher_options.h"

namespace tune::search::detail {

using search::OutputTransform;

// The targets for losses `y` (at least one value, all finite).
std::vector<double> transform_outputs(const std::vector<double>& y, OutputTransform kind);

// The power transform with a given lambda: targets, and for each loss the
// log of the transform's slope there (the log Jacobian's terms), which make
// fits under different lambdas comparable as likelihoods of the losses.
// lambda = 1 is standardising.
struct PowerTargets {
  std::vector<double> targets;
  std::vector<double> log_slope;
};
PowerTargets power_targets(const std::vector<double>& y, double lambda);

// The lambda kPower uses: the Box-Cox lambda under which the targets look
// most like independent normal draws.
double normal_lambda(const std::vector<double>& y);

}  // namespace tune::search::detail
