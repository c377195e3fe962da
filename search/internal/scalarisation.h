// What GP-BO models when a trial's value is not one finite number of one
// objective: several objectives scalarised as ParEGO does, and constraint
// violations turned into losses worse than every feasible one. Pure
// functions over the observed losses (search/internal/model_based.h).
#pragma once

#include <vector>

#include "search/domain.h"

namespace tune::search::detail {

// ParEGO (Knowles 2006): weights drawn uniformly on the simplex, each
// objective scaled to [0, 1] between its best and worst value in `losses`
// (one row per trial, lower is better), and each trial's value the
// augmented Chebyshev function max_j w_j f_j + 0.05 * sum_j w_j f_j.
std::vector<double> chebyshev_scalarisation(const std::vector<std::vector<double>>& losses,
                                            Rng& rng);

// Makes each value whose violation is > 0 worse than every feasible one:
// the worst feasible value plus the feasible span times 1 and its share of
// the largest violation. Unchanged when no value violates.
void penalise_infeasible(std::vector<double>& values, const std::vector<double>& violations);

}  // namespace tune::search::detail
