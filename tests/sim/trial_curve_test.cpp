// Simulated ranks report the curve [simulation] names
// (tune/launch/sim/trial_curve.h), as a user meets it: what the database holds
// after a sweep over a curve table or a parametric family, and a table
// that cannot serve the param_space refused before anything runs.
#include <doctest/doctest.h>

#include "../tune/curve_experiment.h"
#include "../tune/sqlite_query.h"
#include "storage/experiment_store.h"
#include "table_sweep.h"
#include "train/builtins/curve_families.h"

using namespace tune;

TEST_CASE("a simulated sweep over a curve table reports each config's rows") {
  test::ScratchDir dir;
  test::write_table_sweep(dir);
  const auto run = test::run_tunerun("table.toml --storage-path runs -q", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto db = dir.path() / "runs/table/experiment.db";
  CHECK(
      test::query(db,
                  "SELECT json_extract(t.config, '$.lr'), json_extract(t.config, '$.layers'), "
                  "r.training_iteration, r.metrics FROM results r JOIN trials t USING "
                  "(trial_id) ORDER BY 1, 2, 3") ==
      std::vector<std::vector<std::string>>{{"0.01", "2", "1", R"({"accuracy":0.3,"loss":0.7})"},
                                            {"0.01", "2", "2", R"({"accuracy":0.5,"loss":0.5})"},
                                            {"0.01", "2", "3", R"({"accuracy":0.55,"loss":0.45})"},
                                            {"0.01", "4", "1", R"({"accuracy":0.2,"loss":0.8})"},
                                            {"0.01", "4", "2", R"({"accuracy":0.6,"loss":0.4})"},
                                            {"0.01", "4", "3", R"({"accuracy":0.7,"loss":0.3})"},
                                            {"0.1", "2", "1", R"({"accuracy":0.4,"loss":0.6})"},
                                            {"0.1", "2", "2", R"({"accuracy":0.45,"loss":0.55})"},
                                            {"0.1", "2", "3", R"({"accuracy":0.46,"loss":0.54})"},
                                            {"0.1", "4", "1", R"({"accuracy":0.35,"loss":0.65})"},
                                            {"0.1", "4", "2", R"({"accuracy":0.5,"loss":0.5})"}});
}

TEST_CASE("a table that lacks a config the param_space names is refused before anything runs") {
  test::ScratchDir dir;
  std::string sweep = test::kTableSweep;
  sweep.replace(sweep.find("[2, 4]"), 6, "[2, 8]");
  test::write_table_sweep(dir, sweep);
  const auto run = test::run_tunerun("table.toml --storage-path runs", dir.path());
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("table.toml:9: key 'param_space.layers': 8 is not in column 'layers' of "
                        "the curve table ") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "runs/table"));
}

TEST_CASE("a crossing-family sweep reports the family's accuracy of each config") {
  test::ScratchDir dir;
  ExperimentSpec spec = test::curve(dir, "crossing");
  spec.cluster.launcher = "sim";
  spec.total_cpus = 0;
  spec.simulation.curve = "crossing";
  spec.simulation.nodes = 2;
  spec.simulation.cpus_per_node = 2;
  spec.num_samples = 4;
  spec.param_space.set("lr", loguniform(1e-4, 1));
  spec.param_space.set("momentum", uniform(0, 0.99));
  spec.param_space.set("layers", randint(1, 9));
  spec.param_space.set("dropout", uniform(0, 0.6));
  spec.param_space.set("iterations", 3);
  CHECK(test::run_quietly(spec).num_terminated == 4);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  int checked = 0;
  for (const auto& trial : store.trials()) {
    const auto point = sim::FamilyPoint::from_config(Config(trial.config));
    for (const auto& result : store.results(trial.trial_id)) {
      CHECK(result.metrics.at("accuracy").get<double>() ==
            doctest::Approx(sim::family_accuracy(sim::CurveFamily::kCrossing, point,
                                                 result.training_iteration)));
      ++checked;
    }
  }
  CHECK(checked == 12);
}
