// The store with several objectives: the objectives table, the
// objective_values and pareto_front views a user queries with sqlite3, and
// constraints keeping infeasible trials off the front and out of best_trial.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sql.h"
#include "storage/experiment_store.h"
#include "temp_dir.h"
#include "version3.h"

using tune::Json;
using tune::Mode;
using tune::Objective;
using tune::TrialStatus;
using tune::storage::ExperimentStore;
using tune::storage::ResultRecord;
using tune::storage::TrialRecord;
using tune::test::Sql;
using tune::test::TempDir;

namespace {

// Trials 0.. with these last results (trial 0 also reported an earlier one).
void write_trials(ExperimentStore& store, const std::vector<Json>& last) {
  for (size_t i = 0; i < last.size(); ++i) {
    TrialRecord trial;
    trial.trial_id = "exp_" + std::to_string(i);
    trial.trial_index = static_cast<int64_t>(i);
    trial.config = Json{{"i", i}};
    trial.status = TrialStatus::kTerminated;
    store.put_trial(trial);
    if (i == 0) store.append_result({trial.trial_id, 1, 0, 0, 0, {{"acc", 0.99}, {"lat", 0.1}}});
    store.append_result({trial.trial_id, 2, 0, 0, 0, last[i]});
  }
  store.flush();
}

}  // namespace

TEST_CASE("pareto_front ranks trials by their last results, with crowding, feasible ones only") {
  TempDir dir;
  ExperimentStore store = ExperimentStore::open(dir.path());
  store.put_experiment({.name = "exp",
                        .metric = "acc",
                        .mode = Mode::kMax,
                        .objectives = {{"acc", Mode::kMax}, {"lat", Mode::kMin}}});
  write_trials(store, {{{"acc", 0.9}, {"lat", 10}},
                       {{"acc", 0.8}, {"lat", 5}},
                       {{"acc", 0.7}, {"lat", 6}},
                       {{"acc", 0.6}, {"lat", 2}},
                       {{"acc", 0.95}, {"lat", 1}, {"constraints", {0.5, -1}}},
                       {{"acc", 0.99}, {"lat", 3}, {"constraints", -1}},
                       {{"acc", 0.1}}});
  Sql sql(dir.path() / "experiment.db");
  CHECK(sql.rows("SELECT position, metric, mode FROM objectives") ==
        std::vector<std::vector<std::string>>{{"0", "acc", "max"}, {"1", "lat", "min"}});
  // Trial 5 beats all but trial 3 (lat 2); trial 4 is infeasible, trial 6
  // lacks lat. Trial 0's earlier (0.99, 0.1) does not count: last results only.
  const auto rows = sql.rows("SELECT trial_id, rank, crowding FROM pareto_front");
  REQUIRE(rows.size() == 5);
  CHECK(rows[0] == std::vector<std::string>{"exp_3", "0", "Inf"});
  CHECK(rows[1] == std::vector<std::string>{"exp_5", "0", "Inf"});
  // Rank 1: 0 (0.9, 10), 1 (0.8, 5); rank 2: 2 (0.7, 6), beaten by 1.
  CHECK(sql.rows("SELECT trial_id, rank FROM pareto_front WHERE rank > 0") ==
        std::vector<std::vector<std::string>>{{"exp_0", "1"}, {"exp_1", "1"}, {"exp_2", "2"}});
  CHECK(sql.scalar("SELECT objective_values FROM pareto_front WHERE trial_id = 'exp_5'") ==
        R"({"acc":0.99,"lat":3})");
  // best_trial goes by the first objective among feasible trials.
  CHECK(sql.scalar("SELECT trial_id FROM best_trial") == "exp_5");

  const auto front = store.pareto_front(true);
  REQUIRE(front.size() == 2);
  CHECK(front[1].trial.trial_id == "exp_5");
  CHECK(front[1].values == Json{{"acc", 0.99}, {"lat", 3}});
  CHECK(std::isinf(front[1].crowding));
  CHECK(store.experiment()->objectives ==
        std::vector<Objective>{{"acc", Mode::kMax}, {"lat", Mode::kMin}});
}

TEST_CASE("crowding distance in a rank is the neighbours' gap over the range, per objective") {
  TempDir dir;
  ExperimentStore store = ExperimentStore::open(dir.path());
  store.put_experiment({.name = "exp", .metric = "a", .objectives = {{"a"}, {"b"}}});
  write_trials(
      store,
      {{{"a", 0}, {"b", 4}}, {{"a", 1}, {"b", 3}}, {{"a", 3}, {"b", 1}}, {{"a", 4}, {"b", 0}}});
  Sql sql(dir.path() / "experiment.db");
  CHECK(sql.rows("SELECT trial_id, crowding FROM pareto_front WHERE crowding < 1e300") ==
        std::vector<std::vector<std::string>>{{"exp_1", "1.5"}, {"exp_2", "1.5"}});
}

TEST_CASE("one objective: the objectives table has it, and a version 2 file gains it") {
  TempDir dir;
  {
    ExperimentStore store = ExperimentStore::open(dir.path());
    store.put_experiment({.name = "exp", .metric = "loss", .mode = Mode::kMin});
    write_trials(store, {{{"loss", 3}}, {{"loss", 1}}, {{"loss", 2}}});
    CHECK(store.experiment()->objectives.empty());  // one objective: metric and mode say it
  }
  {
    Sql sql(dir.path() / "experiment.db", SQLITE_OPEN_READWRITE);
    CHECK(sql.scalar("SELECT group_concat(trial_id || ':' || rank) FROM pareto_front") ==
          "exp_1:0,exp_2:1,exp_0:2");
    tune::test::make_version_3(sql);
    sql.exec(R"(DROP VIEW pareto_front; DROP VIEW objective_values; DROP TABLE objectives;
                UPDATE schema_info SET value = '2'; PRAGMA user_version = 2;)");
  }
  CHECK(ExperimentStore::open_read_only(dir.path()).pareto_front().empty());
  ExperimentStore store = ExperimentStore::open(dir.path());
  Sql sql(dir.path() / "experiment.db");
  CHECK(sql.scalar("PRAGMA user_version") == "6");
  CHECK(sql.scalar("SELECT metric || ' ' || mode FROM objectives") == "loss min");
  CHECK(store.pareto_front(true).at(0).trial.trial_id == "exp_1");
}
