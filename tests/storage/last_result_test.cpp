// trial_last_result: each trial's last result (and count of results) kept
// as results are written, and the views that read it. What a user gets from last_results,
// best_trial, objective_values and pareto_front must be what version 3's
// views computed by searching the results, through rewinds, a resume, a
// new metric and the upgrade of a version 3 file.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "sql.h"
#include "storage/experiment_store.h"
#include "temp_dir.h"
#include "version3.h"

using tune::Json;
using tune::Mode;
using tune::TrialStatus;
using tune::storage::ExperimentRecord;
using tune::storage::ExperimentStore;
using tune::test::Sql;
using tune::test::TempDir;

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kNotANumber = std::numeric_limits<double>::quiet_NaN();

// What the user's queries answer, each in a fixed order.
const std::vector<std::string> kQueries = {
    "SELECT * FROM last_results ORDER BY trial_id",
    "SELECT * FROM best_trial",
    "SELECT * FROM objective_values ORDER BY trial_id, position",
    "SELECT * FROM pareto_front",
    "SELECT * FROM best_result",
};

ExperimentRecord two_objectives(const std::string& metric, Mode mode) {
  return {.name = "exp",
          .metric = metric,
          .mode = mode,
          .objectives = {{metric, mode}, {metric == "acc" ? "lat" : "acc", Mode::kMin}}};
}

std::string id(int i) { return "exp_" + std::to_string(i); }

void add_trials(ExperimentStore& store, int n) {
  for (int i = 0; i < n; ++i) {
    store.put_trial({.trial_id = id(i),
                     .trial_index = i,
                     .config = {{"x", i}},
                     .status = i == 3 ? TrialStatus::kError : TrialStatus::kRunning});
  }
}

void report(ExperimentStore& store, int trial, int64_t iteration, Json metrics) {
  store.append_result({.trial_id = id(trial),
                       .training_iteration = iteration,
                       .timestamp = 100.0 * trial + static_cast<double>(iteration),
                       .metrics = std::move(metrics)});
}

// A query's rows as text, one line a row, for CHECK to compare and print.
std::string rows_of(Sql& sql, const std::string& query) {
  std::string out;
  for (const auto& row : sql.rows(query)) {
    for (const std::string& value : row) out += value + "|";
    out += "\n";
  }
  return out;
}

// Every query's rows on `dir`'s file against a copy of it turned into
// version 3: the same, and not empty where the experiment has them.
void check_as_version_3(const std::filesystem::path& dir, const std::string& phase) {
  const auto copy = dir / "version3.db";
  std::filesystem::remove(copy);
  Sql now(dir / "experiment.db");
  now.exec("VACUUM INTO '" + copy.string() + "'");
  Sql old(copy, SQLITE_OPEN_READWRITE);
  tune::test::make_version_3(old);
  for (const std::string& query : kQueries) {
    INFO(phase << ": " << query);
    CHECK(rows_of(now, query) == rows_of(old, query));
  }
  // Each trial's count of results, kept alike.
  CHECK(rows_of(now, "SELECT trial_id, num_results FROM trial_last_result ORDER BY trial_id") ==
        rows_of(now, "SELECT trial_id, count(*) FROM results GROUP BY trial_id ORDER BY trial_id"));
  CHECK(!now.rows("SELECT * FROM pareto_front").empty());
  CHECK(now.rows("SELECT * FROM best_trial").size() == 1);
}

// Trials whose last results hold every case the views tell apart: better
// and worse values of both objectives, a constraint broken, NaN, infinity,
// the metric missing, ties (the earlier trial wins), a failed trial, a
// trial without results, results arriving out of order and twice.
void write_experiment(ExperimentStore& store) {
  store.put_experiment(two_objectives("acc", Mode::kMax));
  add_trials(store, 10);
  report(store, 0, 1, {{"acc", 0.5}, {"lat", 3}});
  report(store, 0, 2, {{"acc", 0.9}, {"lat", 5}});     // front: the most accurate
  report(store, 1, 1, {{"acc", 0.95}, {"lat", 1}});    // the best until rewound
  report(store, 1, 2, {{"acc", 0.7}, {"lat", 1}});     // front: the fastest
  report(store, 2, 2, {{"acc", 0.8}, {"lat", 2}});     // iteration 2 before 1
  report(store, 2, 1, {{"acc", 0.99}, {"lat", 0.5}});  // not the last: ignored
  report(store, 3, 1, {{"acc", 0.8}, {"lat", 2}});     // ERROR: in last_results, never best
  report(store, 4, 1, {{"acc", 0.97}, {"lat", 0.1}, {"constraints", {0.5, -1}}});  // infeasible
  report(store, 5, 1, {{"acc", 0.6}, {"lat", 4}, {"constraints", -1}});
  report(store, 6, 1, {{"acc", kNotANumber}, {"lat", 1}});
  report(store, 7, 1, {{"acc", kInfinity}, {"lat", 1}});
  report(store, 8, 1, {{"lat", 0.2}});              // no acc
  report(store, 0, 2, {{"acc", 0.1}, {"lat", 9}});  // a replay: the first one stays
  store.flush();
}

}  // namespace

TEST_CASE("the kept last results give the views version 3's rows, through rewinds and a resume") {
  TempDir dir;
  {
    ExperimentStore store = ExperimentStore::open(dir.path());
    write_experiment(store);
    check_as_version_3(dir.path(), "written");
    Sql sql(dir.path() / "experiment.db");
    CHECK(sql.scalar("SELECT trial_id FROM best_trial") == id(0));
    CHECK(sql.scalar("SELECT count(*) FROM trial_last_result") == "9");

    // A PBT exploit rewinds trial 1 to iteration 1: its 0.95 is last again.
    store.remove_results_after(id(1), 1);
    store.flush();
    check_as_version_3(dir.path(), "rewound");
    CHECK(sql.scalar("SELECT trial_id || ' ' || metric_value FROM best_trial") == id(1) + " 0.95");
    // Only the latest is kept: a trial rewound below its first result has none.
    store.remove_results_after(id(5), 0);
    store.flush();
    check_as_version_3(dir.path(), "rewound to nothing");
    CHECK(sql.scalar("SELECT count(*) FROM trial_last_result WHERE trial_id = 'exp_5'") == "0");
  }
  {
    // Resumed: replays and new results, a tie with the best.
    ExperimentStore store = ExperimentStore::open(dir.path());
    report(store, 1, 1, {{"acc", 0.1}, {"lat", 1}});  // a replay
    report(store, 1, 2, {{"acc", 0.96}, {"lat", 0.9}});
    report(store, 9, 1, {{"acc", 0.96}, {"lat", 0.9}});  // ties with trial 1, later
    report(store, 5, 1, {{"acc", 0.3}, {"lat", 0.05}});
    store.flush();
    check_as_version_3(dir.path(), "resumed");
    Sql sql(dir.path() / "experiment.db");
    CHECK(sql.scalar("SELECT trial_id FROM best_trial") == id(1));

    // The other objective first: every kept value follows the new metric.
    store.put_experiment(two_objectives("lat", Mode::kMin));
    store.flush();
    check_as_version_3(dir.path(), "metric changed");
    CHECK(sql.scalar("SELECT trial_id FROM best_trial") == id(5));
  }
}

TEST_CASE("a version 3 file opened for writing gains trial_last_result, filled from its results") {
  TempDir dir;
  {
    ExperimentStore store = ExperimentStore::open(dir.path());
    write_experiment(store);
  }
  const auto kept_rows = [&](Sql& sql) {
    return rows_of(sql, "SELECT * FROM trial_last_result ORDER BY trial_id");
  };
  std::string kept;
  std::vector<std::string> answers;
  {
    Sql sql(dir.path() / "experiment.db", SQLITE_OPEN_READWRITE);
    kept = kept_rows(sql);
    for (const std::string& query : kQueries) answers.push_back(rows_of(sql, query));
    tune::test::make_version_3(sql);
  }
  {
    // Read as it is: its own views, nothing added.
    ExperimentStore old = ExperimentStore::open_read_only(dir.path());
    CHECK(old.best_trial()->trial.trial_id == id(0));
    Sql sql(dir.path() / "experiment.db");
    CHECK(sql.scalar("PRAGMA user_version") == "3");
  }
  ExperimentStore store = ExperimentStore::open(dir.path());
  Sql sql(dir.path() / "experiment.db");
  CHECK(sql.scalar("PRAGMA user_version") == "6");
  CHECK(kept_rows(sql) == kept);
  for (size_t i = 0; i < kQueries.size(); ++i) {
    INFO(kQueries[i]);
    CHECK(rows_of(sql, kQueries[i]) == answers[i]);
  }
  // And kept from then on.
  report(store, 8, 2, {{"acc", 0.999}, {"lat", 0.2}});
  store.flush();
  CHECK(sql.scalar("SELECT trial_id FROM best_trial") == id(8));
  check_as_version_3(dir.path(), "upgraded");
}
