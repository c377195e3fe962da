// Pareto arithmetic over objective vectors, shared by the multi-objective
// searchers, the schedulers and the benchmarks. Every vector is a loss
// vector: lower is better in each objective (a "max" objective is negated
// before it gets here).
//
// Constrained domination (Deb et al. 2002, as Optuna's NSGA-II): a feasible
// point (violation 0) dominates every infeasible one; of two infeasible
// points the one with the smaller total violation dominates; two feasible
// points compare by Pareto domination.
#pragma once

#include <cstddef>
#include <vector>

#include "core/config.h"

namespace tune::core {

using Point = std::vector<double>;

// The result key a trial reports its constraint values under, as Optuna's
// constraints_func returns them: a number or a list of numbers, each <= 0
// when satisfied. A trial whose last result violates one is infeasible:
// searchers that handle constraints prefer feasible configs, and the
// experiment's front (the pareto_front view) and best trial count feasible
// trials only.
inline constexpr const char* kConstraintsKey = "constraints";

// A result's total constraint violation: the sum of its positive
// constraint values, infinity for one that is not a number (or NaN); 0
// when it reports none (feasible).
double constraint_violation(const Json& result);

// Whether `a` Pareto-dominates `b`: no worse in every objective, better in
// one.
bool dominates(const Point& a, const Point& b);

// The non-dominated rank of every point: 0 for the Pareto front, 1 for the
// front of the rest, and so on (NSGA-II's fast non-dominated sort).
// `violation`, when not empty, is parallel to `points` (total constraint
// violation, 0: feasible) and the sort uses constrained domination.
std::vector<int> nondominated_ranks(const std::vector<Point>& points,
                                    const std::vector<double>& violation = {});

// The same sort as fronts: element r lists the indices of rank r, ascending.
std::vector<std::vector<size_t>> nondominated_fronts(const std::vector<Point>& points,
                                                     const std::vector<double>& violation = {});

// NSGA-II's crowding distance of each of `members` (indices into `points`,
// usually one front) within that set: per objective, the gap between a
// member's two neighbours over the set's range, summed; the extremes of each
// objective get infinity. Parallel to `members`.
std::vector<double> crowding_distances(const std::vector<Point>& points,
                                       const std::vector<size_t>& members);

// All indices best first, as NSGA-II's selection orders them: by rank
// (constrained, with `violation`), then by crowding distance within the rank
// (larger first), then by index.
std::vector<size_t> elite_order(const std::vector<Point>& points,
                                const std::vector<double>& violation = {});

// The hypervolume the points dominate below `reference` (each point's box
// [point, reference]); points not strictly below the reference in every
// objective add nothing. Exact: a sweep in two objectives, slicing along the
// last objective above that (fine for the hundreds of points a sweep has).
double hypervolume(std::vector<Point> points, const Point& reference);

// Each point's exclusive hypervolume contribution: hypervolume(all) minus
// hypervolume(all but it). Parallel to `points`.
std::vector<double> hypervolume_contributions(const std::vector<Point>& points,
                                              const Point& reference);

// A reference point for a set of loss vectors: per objective the worst
// value pushed out by 10% of its magnitude (at least 1e-12), as Optuna's
// MOTPE builds one, so every point of the set adds volume.
Point reference_beyond(const std::vector<Point>& points);

// Greedy hypervolume subset selection: `k` of `members` (indices into
// `points`), each pick the one adding the most hypervolume below
// `reference` to those already picked (ties: the earlier member). All of
// them when k >= members.size(). In the order picked.
std::vector<size_t> hypervolume_subset(const std::vector<Point>& points,
                                       const std::vector<size_t>& members, size_t k,
                                       const Point& reference);

}  // namespace tune::core

namespace tune {
using core::constraint_violation;
using core::crowding_distances;
using core::dominates;
using core::elite_order;
using core::hypervolume;
using core::hypervolume_contributions;
using core::hypervolume_subset;
using core::kConstraintsKey;
using core::nondominated_fronts;
using core::nondominated_ranks;
}  // namespace tune
