#include "search/internal/budget_history.h"

#include <doctest/doctest.h>

#include "core/errors.h"

namespace tune::search::detail {
namespace {

TEST_CASE("rank_agreement: +1 for the same order, -1 for the reverse, ties left out") {
  CHECK(rank_agreement({{1, 10}, {2, 20}, {3, 30}}) == 1.0);
  CHECK(rank_agreement({{1, 30}, {2, 20}, {3, 10}}) == -1.0);
  // Pairs (1,2) and (1,3) concordant, (2,3) discordant; the tie on the
  // left (3, 3) counts neither way.
  CHECK(rank_agreement({{1, 10}, {2, 30}, {3, 20}, {3, 40}}) == doctest::Approx((4.0 - 1.0) / 5.0));
  CHECK(rank_agreement({{1, 10}}) == 0.0);
}

TEST_CASE("BudgetHistory: a trial is stopped below a budget once it ended short of it") {
  BudgetHistory h;
  const std::vector<double> x{0.5};
  for (uint64_t t = 0; t < 3; ++t) h.record(t, x, 1, double(t));
  h.record(0, x, 3, 0.0);
  h.record(0, x, 3, -1.0);  // replaces, not a second result
  CHECK(h.results_at(1) == 3);
  CHECK(h.results_at(3) == 1);
  CHECK(h.stopped_below(3) == 0);  // trials 1 and 2 may still go on
  h.end(1);
  h.end(0);
  h.end(7);  // unknown: ignored
  CHECK(h.stopped_below(3) == 1);
  CHECK(h.stopped_below(9) == 2);
  REQUIRE(h.stopped_list(9).size() == 2);
  CHECK(h.stopped_list(9)[1].last_budget == 1);
  h.record(1, x, 9, 0.0);  // a late result: trial 1 stopped at 9, not 1
  CHECK(h.stopped_below(3) == 0);
  CHECK(h.stopped_below(27) == 2);
}

TEST_CASE("BudgetHistory: agreement compares two budgets on the trials that have both") {
  BudgetHistory h;
  const std::vector<double> x{0.5};
  // Budget 1 ranks trials 0..3 as budget 9 does; budget 3 reverses them.
  for (uint64_t t = 0; t < 4; ++t) {
    const double v = static_cast<double>(t);
    h.record(t, x, 1, v);
    h.record(t, x, 3, -v);
    h.record(t, x, 9, v * 2);
  }
  h.record(4, x, 1, 100.0);  // only at 1: not compared
  CHECK(h.agreement(1, 9) == 1.0);
  CHECK(h.agreement(3, 9) == 0.0);   // worse than chance weighs nothing
  CHECK(h.agreement(1, 27) == 0.0);  // no trial has both
}

TEST_CASE("BudgetHistory: save and restore keep results and ends") {
  BudgetHistory h;
  h.record(2, {0.1, 0.2}, 1, 0.5);
  h.record(2, {0.1, 0.2}, 3, 0.4);
  h.record(5, {0.3, 0.4}, 1, 0.9);
  h.end(5);
  const BudgetHistory r = BudgetHistory::restore(Json::parse(h.save().dump()), 2);
  CHECK(r.save() == h.save());
  CHECK(r.stopped_below(3) == 1);
  CHECK_THROWS_AS(BudgetHistory::restore(h.save(), 3), Error);
}

}  // namespace
}  // namespace tune::search::detail
