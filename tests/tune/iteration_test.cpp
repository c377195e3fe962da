// IterationCollector: an iteration completes when every rank reported it;
// metrics are rank 0's unless reduced.
#include "tune/execution/iteration.h"

#include <doctest/doctest.h>

#include "core/errors.h"

using namespace tune;

namespace {

protocol::Report report(int64_t iteration, double loss,
                        std::map<std::string, ReduceOp> reduce = {}) {
  return {iteration,        {{"loss", loss}, {"rank_note", loss * 10}}, 0.5, 1.0 * iteration, false,
          std::move(reduce)};
}

}  // namespace

TEST_CASE("an iteration completes with the last rank's report, rank 0's metrics") {
  IterationCollector c;
  c.reset(3, 0);
  CHECK_FALSE(c.add(1, report(1, 2.0)));
  CHECK_FALSE(c.add(0, report(1, 1.0)));
  auto done = c.add(2, report(1, 3.0));
  REQUIRE(done);
  CHECK(done->iteration == 1);
  CHECK(done->metrics["loss"] == 1.0);
  CHECK(done->time_total_s == 1.0);
}

TEST_CASE("reductions over ranks: mean, sum, min, max") {
  for (auto [op, expected] : {std::pair{ReduceOp::kMean, 2.0}, std::pair{ReduceOp::kSum, 6.0},
                              std::pair{ReduceOp::kMin, 1.0}, std::pair{ReduceOp::kMax, 3.0}}) {
    IterationCollector c;
    c.reset(3, 4);  // resumed after iteration 4
    c.add(0, report(5, 1.0, {{"loss", op}}));
    c.add(1, report(5, 2.0, {{"loss", op}}));
    auto done = c.add(2, report(5, 3.0, {{"loss", op}}));
    REQUIRE(done);
    CHECK(done->metrics["loss"] == expected);
    CHECK(done->metrics["rank_note"] == 10.0);  // not reduced: rank 0's
  }
}

TEST_CASE("a report out of order or from a rank that does not exist is a protocol error") {
  IterationCollector c;
  c.reset(2, 0);
  CHECK_THROWS_WITH_AS(c.add(0, report(2, 1.0)), doctest::Contains("iteration 2 after 0"),
                       ProtocolError);
  CHECK_THROWS_AS(c.add(2, report(1, 1.0)), ProtocolError);
}
