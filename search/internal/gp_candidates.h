// GP-BO's candidates: the points the acquisition is scored at before the
// best few are refined (internal/gp.h says which and why).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "search/internal/model_based.h"
#include "search/internal/space_encoding.h"

namespace tune::search::detail {

// Rows [0, trust) of the candidates lie in the trust region, rows
// [trust, trust + local) around the best trials, the rest are uniform. Of
// the local rows, every other one lies around the best trial alone, at
// scales from 0.03 down to 0.0003 of each range; the others around the
// best five in turn, at 0.1.
struct CandidatePlan {
  Eigen::Index total = 0;
  Eigen::Index trust = 0;
  Eigen::Index local = 0;
};

// The plan for `n_candidates`: a quarter around the best trials, and with
// `trust_region` another quarter in the trust region.
CandidatePlan plan_candidates(int64_t n_candidates, bool trust_region);

// The trust region's side per encoded dim, TuRBO's shape: each numeric
// dim's lengthscale (theta holds one per GP input) over their geometric
// mean, so a long lengthscale's dimension moves more than a short one's.
// A categorical dim's one-hot inputs are not perturbed here, so their
// lengthscales do not count (and their entries stay kLocalSd, unused).
// Without a trust region every side is the local perturbation's.
std::vector<double> trust_box(const std::vector<Dimension>& dims, const Eigen::VectorXd& theta);
std::vector<double> local_box(const std::vector<Dimension>& dims);

// v folded into [0, 1] by reflection at the bounds (-0.1 -> 0.1, 1.2 ->
// 0.8): a perturbed candidate lands on a bound no more often than on any
// other point.
double reflect_into_unit(double v);

// The candidates, as the plan says, each at its lattice point. `by_value`:
// the completed trials, best first; `box`: trust_box's sides.
Eigen::MatrixXd draw_candidates(const SpaceEncoding& encoding,
                                const std::vector<ModelBasedSearcher::Observation>& obs,
                                const std::vector<Eigen::Index>& by_value,
                                const CandidatePlan& plan, const std::vector<double>& box,
                                Rng& rng);

// Where refinement starts: the best few candidates, and the best of the
// uniform ones (a restart away from the best trials, where EI may hide a
// second basin).
std::vector<Eigen::Index> refinement_starts(const Eigen::VectorXd& score,
                                            const CandidatePlan& plan);

}  // namespace tune::search::detail
