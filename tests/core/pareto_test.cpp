// core/pareto: fronts, crowding, hypervolume and constraint violation on
// sets whose answers can be worked out by hand.
#include "core/pareto.h"

#include <doctest/doctest.h>

#include <cmath>

using tune::Json;
using tune::core::Point;

TEST_CASE("non-dominated ranks peel the fronts one after another") {
  const std::vector<Point> points = {{1, 5}, {2, 2}, {5, 1}, {3, 3}, {4, 4}, {6, 6}, {2, 2}};
  // (3, 3) is beaten by (2, 2) only, (4, 4) by (3, 3) too, (6, 6) by all;
  // equal points do not beat each other.
  CHECK(tune::nondominated_ranks(points) == std::vector<int>{0, 0, 0, 1, 2, 3, 0});
  const auto fronts = tune::nondominated_fronts(points);
  REQUIRE(fronts.size() == 4);
  CHECK(fronts[0] == std::vector<size_t>{0, 1, 2, 6});
  CHECK(fronts[3] == std::vector<size_t>{5});
}

TEST_CASE("constrained domination: feasible first, then the smaller violation") {
  const std::vector<Point> points = {{1, 1}, {5, 5}, {0, 0}, {9, 9}};
  const std::vector<double> violation = {2.0, 0.0, 1.0, 0.0};
  // The feasible (5, 5) and (9, 9) come first, then (0, 0) (violation 1),
  // then (1, 1) (violation 2), whatever their objectives.
  CHECK(tune::nondominated_ranks(points, violation) == std::vector<int>{3, 0, 2, 1});
}

TEST_CASE("crowding distance: the ends infinite, the middle the neighbours' gap over the range") {
  const std::vector<Point> points = {{0, 4}, {1, 3}, {3, 1}, {4, 0}};
  const auto d = tune::crowding_distances(points, {0, 1, 2, 3});
  CHECK(std::isinf(d[0]));
  CHECK(std::isinf(d[3]));
  CHECK(d[1] == doctest::Approx(3.0 / 4 + 3.0 / 4));  // (3 - 0) / 4 in each objective
  CHECK(d[2] == doctest::Approx(3.0 / 4 + 3.0 / 4));
}

TEST_CASE("hypervolume in two and three objectives, and what each point adds") {
  CHECK(tune::hypervolume({{1, 2}, {2, 1}}, {3, 3}) == doctest::Approx(3));
  // Points outside the reference box add nothing.
  CHECK(tune::hypervolume({{1, 2}, {2, 1}, {4, 0}}, {3, 3}) == doctest::Approx(3));
  CHECK(tune::hypervolume({}, {3, 3}) == 0);
  CHECK(tune::hypervolume({{0, 0, 0}}, {1, 2, 3}) == doctest::Approx(6));
  CHECK(tune::hypervolume({{0, 0, 1}, {1, 1, 0}}, {2, 2, 2}) == doctest::Approx(4 + 2 - 1));
  const auto c = tune::hypervolume_contributions({{1, 2}, {2, 1}, {2.5, 2.5}}, {3, 3});
  CHECK(c[0] == doctest::Approx(1));
  CHECK(c[1] == doctest::Approx(1));
  CHECK(c[2] == doctest::Approx(0));  // dominated
}

TEST_CASE("hypervolume subset selection picks the point covering most first") {
  const std::vector<Point> points = {{1, 2}, {2, 1}, {1.5, 1.5}};
  // Alone, (1.5, 1.5) covers 2.25 of the box below (3, 3); the others 2.
  CHECK(tune::hypervolume_subset(points, {0, 1, 2}, 1, {3, 3}) == std::vector<size_t>{2});
  CHECK(tune::hypervolume_subset(points, {0, 1, 2}, 5, {3, 3}).size() == 3);
}

TEST_CASE("constraint violation sums the positive constraint values") {
  CHECK(tune::constraint_violation(Json{{"loss", 1}}) == 0);
  CHECK(tune::constraint_violation(Json{{"constraints", {-1, 0.5, 2}}}) == doctest::Approx(2.5));
  CHECK(tune::constraint_violation(Json{{"constraints", -3}}) == 0);
  CHECK(std::isinf(tune::constraint_violation(Json{{"constraints", {nullptr}}})));
}
