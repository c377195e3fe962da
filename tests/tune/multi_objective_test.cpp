// Several objectives from the sweep file to the store and back: metric and
// mode lists, the plug-ins that refuse them, a CLI run whose `tunerun best`
// prints the Pareto front (constraints keeping infeasible trials off it),
// and ResultGrid asking which objective to judge by.
#include <doctest/doctest.h>

#include "core/errors.h"
#include "core/pareto.h"
#include "sqlite_query.h"
#include "test_util.h"
#include "train/builtins/builtins.h"
#include "tune/result_grid.h"
#include "tune/spec/sweep_file.h"

using tune::ConfigError;
using tune::Json;
using tune::Mode;
using tune::Objective;
using tune::test::query;
using tune::test::run_tunerun;
using tune::test::ScratchDir;

namespace {

std::string objectives_sweep(const std::string& top, const std::string& search = "motpe") {
  return top + "\n[trainable]\nbuiltin = \"noop\"\n[param_space]\nx = { uniform = [0, 1] }\n" +
         "[search]\nalgorithm = \"" + search + "\"\n";
}

// The ConfigError's key, or "" when `text` parses.
std::string error_key(const std::string& text) {
  train::register_builtin_trainables();
  try {
    tune::parse_sweep(text, "sweep.toml");
  } catch (const ConfigError& e) {
    return e.key();
  }
  return "";
}

}  // namespace

TEST_CASE("metric and mode lists in a sweep file make several objectives") {
  train::register_builtin_trainables();
  const auto spec = tune::parse_sweep(objectives_sweep(R"(metric = ["accuracy", "latency_ms"]
mode = ["max", "min"])"),
                                      "sweep.toml");
  CHECK(spec.objectives() ==
        std::vector<Objective>{{"accuracy", Mode::kMax}, {"latency_ms", Mode::kMin}});
  CHECK(spec.metric == "accuracy");  // the first one, for what reads one metric
  // One mode for all.
  CHECK(tune::parse_sweep(objectives_sweep("metric = [\"a\", \"b\"]\nmode = \"max\""), "s.toml")
            .objectives() == std::vector<Objective>{{"a", Mode::kMax}, {"b", Mode::kMax}});
  // A list of one is one metric.
  CHECK(tune::parse_sweep(objectives_sweep("metric = [\"a\"]"), "s.toml").objectives().size() == 1);
}

TEST_CASE("several objectives are refused where they cannot work, at the key to change") {
  CHECK(error_key(objectives_sweep(
            "metric = [\"a\", \"b\"]\nmode = [\"max\", \"min\", \"min\"]")) == "mode");
  CHECK(error_key(objectives_sweep("metric = [\"a\", \"a\"]")) == "metric");
  CHECK(error_key(objectives_sweep("metric = [\"a\", 3]")) == "metric");
  CHECK(error_key(objectives_sweep("metric = [\"a\", \"b\"]", "tpe")) == "metric");
  CHECK(error_key(objectives_sweep("metric = [\"a\", \"b\"]", "random")).empty());
  CHECK(error_key(objectives_sweep("metric = [\"a\", \"b\"]", "nsga2")).empty());
  CHECK(error_key(objectives_sweep("metric = [\"a\", \"b\"]\n[scheduler]\ntype = \"asha\"")) ==
        "metric");
}

TEST_CASE("a two-objective sweep runs, and `tunerun best` prints its Pareto front") {
  ScratchDir dir;
  // acc = x (max), lat = x + y (min): for each x the smallest y is best;
  // x > 0.8 is infeasible.
  dir.write("mo.toml", R"(
name = "mo"
metric = ["acc", "lat"]
mode = ["max", "min"]
num_samples = 12
seed = 4
[trainable]
command = ["sh", "-c", '''awk -v x="$1" -v y="$2" 'BEGIN {{ printf "@tunerun {{\"acc\": %.6f, \"lat\": %.6f, \"constraints\": [%.6f]}}\n", x, x + y, x - 0.8 }}' ''', "sh", "{x}", "{y}"]
[param_space]
x = { uniform = [0, 1] }
y = { uniform = [0, 1] }
[search]
algorithm = "nsga2"
population_size = 6
)");
  auto run = run_tunerun("-q mo.toml", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto db = dir.path() / "runs/mo/experiment.db";
  const auto rows = query(db,
                          "SELECT json_extract(metrics, '$.acc'), "
                          "json_extract(metrics, '$.lat') FROM last_results");
  REQUIRE(rows.size() == 12);

  // The front by hand: feasible trials no other feasible one beats.
  std::vector<tune::core::Point> feasible;
  for (const auto& r : rows) {
    if (std::stod(r[0]) <= 0.8) feasible.push_back({-std::stod(r[0]), std::stod(r[1])});
  }
  const auto ranks = tune::nondominated_ranks(feasible);
  std::set<double> expected;
  for (size_t i = 0; i < feasible.size(); ++i) {
    if (ranks[i] == 0) expected.insert(-feasible[i][0]);
  }

  auto best = run_tunerun("best runs/mo --json", dir.path());
  INFO(best.output);
  REQUIRE(best.exit_code == 0);
  const Json printed = Json::parse(best.output);
  CHECK(printed["objectives"] == Json::parse(R"([{"metric": "acc", "mode": "max"},
                                                 {"metric": "lat", "mode": "min"}])"));
  std::set<double> front;
  for (const Json& t : printed["front"]) front.insert(t["values"]["acc"].get<double>());
  CHECK(front == expected);
  auto text = run_tunerun("best runs/mo", dir.path());
  CHECK(text.output.find("Pareto front (max acc, min lat): " + std::to_string(expected.size())) !=
        std::string::npos);

  // ResultGrid: no one best, but the best by a named objective, in its own mode.
  const auto grid = tune::ResultGrid::from_experiment(dir.path() / "runs/mo");
  CHECK_THROWS_AS(grid.get_best_result(), ConfigError);
  const tune::Result& fastest = grid.get_best_result("lat");
  for (const tune::Result& r : grid) {
    CHECK(fastest.metrics["lat"].get<double>() <= r.metrics["lat"].get<double>());
  }
  std::set<double> grid_front;
  for (const tune::Result* r : grid.get_pareto_front()) {
    grid_front.insert(r->metrics["acc"].get<double>());
  }
  CHECK(grid_front == expected);
}
