// `tunerun simulate` (tune/cli/simulate_command.cpp) as a user runs it: a
// sweep on N simulated workers, the summary it prints, the database it
// writes, and the exit code of bad input.
#include <doctest/doctest.h>

#include "../tune/sqlite_query.h"
#include "table_sweep.h"

using namespace tune;

TEST_CASE("tunerun simulate runs a sweep on N simulated workers and prints its time to quality") {
  test::ScratchDir dir;
  test::write_table_sweep(dir);
  const auto run = test::run_tunerun(
      "simulate table.toml --workers 4 --seed 3 --targets 0.5,0.65,0.9 --storage-path runs -q",
      dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  // Four one-CPU nodes; every config ran; the best is the table's.
  CHECK(run.output.find("Simulated 4 nodes x 1 CPUs") != std::string::npos);
  CHECK(run.output.find("4 trials started, 11 results") != std::string::npos);
  CHECK(run.output.find("Best accuracy 0.70000") != std::string::npos);
  CHECK(run.output.find("Time to accuracy >= 0.50000: ") != std::string::npos);
  CHECK(run.output.find("Time to accuracy >= 0.65000: ") != std::string::npos);
  CHECK(run.output.find("Time to accuracy >= 0.90000: never") != std::string::npos);
  const auto db = dir.path() / "runs/table/experiment.db";
  CHECK(test::query(db, "SELECT count(DISTINCT host) FROM placements")[0][0] == "4");

  // A sweep file error is bad input, as with `tunerun run`.
  const auto bad = test::run_tunerun("simulate absent.toml --workers 4", dir.path());
  CHECK(bad.exit_code == 2);
}
