// How GP-BO turns observed losses into the targets its Gaussian process
// fits. A GP with a stationary kernel and Gaussian noise expects targets of
// one scale; objectives are often skewed (a valley whose walls are 1e6 high,
// an error rate that saturates), and standardising alone then squeezes the
// good points together and lets the worst ones set the lengthscales.
//
//   kStandardise  (y - mean) / sd.
//   kPower        a power transform fitted by maximum likelihood, as
//                 scikit-learn's PowerTransformer (HEBO does the same):
//                 Box-Cox on (y - min) + shift, with shift a small fraction
//                 of the range so the best value stays finite, lambda in
//                 [-2, 2] maximising the normal log-likelihood, then
//                 standardised. Values spanning orders of magnitude come out
//                 near their logarithm; values already Gaussian near
//                 unchanged (lambda ~ 1).
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

}  // namespace tune::search::detail
