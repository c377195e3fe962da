// Virtual time ([simulation] time = "virtual", tune/launch/lockstep.h) as a user
// meets it: a sweep of simulated days ends in seconds, with timestamps that
// span those days; two runs of one sweep with one seed write the same
// database, row for row, whatever the host's speed (ASHA with faults and
// several ranks per trial, PBT's pauses and clones, HyperBand's pauses and
// promotions); a resumed one goes on from its last time; a bad time is
// refused with its file, line and key.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../tune/curve_experiment.h"
#include "../tune/sqlite_query.h"
#include "tune/spec/experiment.h"

using namespace tune;

namespace {

using Rows = std::vector<std::vector<std::string>>;

// The columns on the host's clock, not the simulation's: when the row was
// last written, and how long the searcher took to suggest the trial.
bool wall_clock(const std::string& table, const std::string& column) {
  return ((table == "experiment" || table == "experiment_state") && column == "updated_at") ||
         (table == "trials" && (column == "suggest_s" || column == "model_fit_s"));
}

// Every row of every table of the experiment, in the table's order, all
// columns but the wall-clock ones, the experiment's directory written DIR.
Rows every_row(const ExperimentSpec& spec) {
  const auto db = spec.experiment_dir() / "experiment.db";
  const std::string dir = spec.storage_path.string();
  Rows out;
  for (const auto& table :
       test::query(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
    std::string columns;
    for (const auto& column :
         test::query(db, "SELECT name FROM pragma_table_info('" + table[0] + "')")) {
      if (wall_clock(table[0], column[0])) continue;
      columns += (columns.empty() ? "" : ", ") + column[0];
    }
    for (auto row : test::query(db, "SELECT " + columns + " FROM " + table[0])) {
      for (auto& cell : row) {
        for (size_t at = cell.find(dir); at != std::string::npos; at = cell.find(dir, at)) {
          cell.replace(at, dir.size(), "DIR");
        }
      }
      row.insert(row.begin(), table[0]);
      out.push_back(std::move(row));
    }
  }
  return out;
}

// Runs `spec` twice, in two directories, and checks both databases alike
// row for row; returns the rows.
Rows check_twice_alike(ExperimentSpec spec) {
  test::ScratchDir first;
  test::ScratchDir second;
  spec.storage_path = first.path();
  test::run_quietly(spec);
  const Rows rows = every_row(spec);
  spec.storage_path = second.path();
  test::run_quietly(spec);
  const Rows again = every_row(spec);
  REQUIRE(rows.size() == again.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO("row ", i, " of table ", rows[i][0]);
    CHECK(rows[i] == again[i]);
  }
  return rows;
}

size_t rows_of(const Rows& rows, const std::string& table) {
  return std::count_if(rows.begin(), rows.end(), [&](const auto& row) { return row[0] == table; });
}

// The learning curve on simulated nodes in virtual time.
ExperimentSpec virtual_curve(const test::ScratchDir& dir, const std::string& name) {
  ExperimentSpec spec = test::checkpointed_curve(dir, name);
  spec.cluster.launcher = "sim";
  spec.total_cpus = 0;  // the nodes'
  spec.simulation.time = "virtual";
  spec.simulation.nodes = 4;
  spec.simulation.cpus_per_node = 4;
  spec.simulation.iteration_s = 600;
  spec.simulation.iteration_jitter = 0.3;
  spec.simulation.seed = 5;
  spec.seed = 3;
  return spec;
}

}  // namespace

TEST_CASE("in virtual time, iterations of a simulated hour span days, and the run ends") {
  test::ScratchDir dir;
  ExperimentSpec spec = virtual_curve(dir, "days");
  // One 1-CPU node: four trials of 24 hourly iterations, one after another.
  spec.simulation.nodes = 1;
  spec.simulation.cpus_per_node = 1;
  spec.simulation.iteration_jitter = 0;
  spec.num_samples = 4;
  spec.param_space.set("iterations", 24);
  spec.param_space.set("sleep_s", 3600);
  ExperimentSummary summary = test::run_quietly(spec);
  CHECK(summary.num_terminated == 4);
  const auto db = spec.experiment_dir() / "experiment.db";
  const auto span = test::query(
      db,
      "SELECT max(timestamp) - min(timestamp), max(time_total_s), min(time_this_iter_s), "
      "min(timestamp) FROM results");
  INFO(span[0][0], " s from first result to last");
  // Four days less the first hour, and each trial trained a day.
  CHECK(std::stod(span[0][0]) >= 95 * 3600 - 1);
  CHECK(std::stod(span[0][1]) == doctest::Approx(24 * 3600));
  CHECK(std::stod(span[0][2]) == doctest::Approx(3600));
  // Virtual time starts on 2000-01-01 (tune/system/clock.h).
  CHECK(std::stod(span[0][3]) == doctest::Approx(kVirtualUnixStart + 3600));
}

TEST_CASE("in virtual time, ASHA over ranks that die and nodes that are lost writes one database") {
  test::ScratchDir dir;
  ExperimentSpec spec = virtual_curve(dir, "asha");
  spec.scheduler = "asha";
  spec.scheduler_options = {{"max_t", 9}, {"grace_period", 1}, {"reduction_factor", 3}};
  spec.num_samples = 12;
  spec.trainable.num_workers = 2;
  spec.param_space.set("iterations", 9);
  spec.param_space.set("checkpoint_every", 2);
  spec.param_space.set("ceiling", uniform(0.6, 0.95));
  spec.param_space.set("speed", loguniform(0.05, 0.5));
  spec.max_failures = 5;
  spec.simulation.rank_death_rate = 0.3;  // per rank and simulated hour
  spec.simulation.node_loss_rate = 0.1;
  spec.simulation.node_recovery_s = 3600;
  spec.simulation.late_report_rate = 0.1;
  spec.simulation.late_report_s = 900;
  const Rows rows = check_twice_alike(spec);
  CHECK(rows_of(rows, "trials") == 12);
  // Faults struck: some trial restarted after a rank's death.
  CHECK(std::count_if(rows.begin(), rows.end(), [](const auto& row) {
          return row[0] == "trial_events" &&
                 std::any_of(row.begin(), row.end(), [](const std::string& cell) {
                   return cell.find("killed by signal 9") != std::string::npos;
                 });
        }) >= 1);
}

TEST_CASE("in virtual time, PBT's pauses and clones are the same in every run") {
  test::ScratchDir dir;
  ExperimentSpec spec = virtual_curve(dir, "pbt");
  spec.scheduler = "pbt";
  spec.scheduler_options = {{"time_attr", "training_iteration"},
                            {"perturbation_interval", 2},
                            {"hyperparam_mutations", {{"speed", {0.05, 0.1, 0.2, 0.3}}}},
                            {"seed", 7}};
  spec.simulation.nodes = 1;
  spec.simulation.cpus_per_node = 2;  // four trials, two at a time: they pause in turn
  spec.num_samples = 4;
  spec.param_space.set("speed", loguniform(0.05, 0.5));
  const Rows rows = check_twice_alike(spec);
  CHECK(rows_of(rows, "exploits") >= 1);
}

TEST_CASE("in virtual time, HyperBand's pauses and promotions are the same in every run") {
  test::ScratchDir dir;
  ExperimentSpec spec = virtual_curve(dir, "hyperband");
  spec.scheduler = "hyperband";
  spec.scheduler_options = {{"max_t", 9}, {"reduction_factor", 3}};
  spec.num_samples = 9;
  spec.param_space.set("iterations", 9);
  spec.param_space.set("speed", loguniform(0.05, 0.5));
  const Rows rows = check_twice_alike(spec);
  CHECK(rows_of(rows, "trials") == 9);
  // Some trial paused at a milestone and was resumed.
  CHECK(std::count_if(rows.begin(), rows.end(), [](const auto& row) {
          return row[0] == "trial_events" && row.size() > 5 && row[5] == "PAUSED";
        }) >= 1);
}

TEST_CASE("a resumed experiment in virtual time goes on from its last time, never back") {
  test::ScratchDir dir;
  ExperimentSpec spec = virtual_curve(dir, "resumed");
  test::stop_at_first_error(spec);
  CHECK(test::run_quietly(spec).interrupted);
  const auto db = spec.experiment_dir() / "experiment.db";
  const auto before = test::query(
      db, "SELECT (SELECT max(id) FROM trial_events), (SELECT max(at) FROM trial_events)");
  CHECK(test::resume_quietly(spec).num_terminated == 3);
  // Every change after the resume is stamped at or after the last before it.
  const auto after =
      test::query(db, "SELECT count(*), min(at) FROM trial_events WHERE id > " + before[0][0]);
  CHECK(std::stoi(after[0][0]) >= 3);
  CHECK(std::stod(after[0][1]) >= std::stod(before[0][1]));
}

TEST_CASE("a bad [simulation] time is refused with the file, line and key") {
  test::ScratchDir dir;
  dir.write("bad.toml", R"(name = "bad_time"
metric = "accuracy"
mode = "max"
[trainable]
builtin = "learning_curve"
[cluster]
launcher = "sim"
[simulation]
time = "fast"
)");
  const auto run = test::run_tunerun("validate bad.toml", dir.path());
  CHECK(run.exit_code == 2);
  INFO(run.output);
  CHECK(run.output.find("bad.toml:9: key 'simulation.time': 'fast' is not a time") !=
        std::string::npos);
}
