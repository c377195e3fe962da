#include "storage/experiment_store.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "core/errors.h"
#include "sql.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using tune::ExperimentStatus;
using tune::Json;
using tune::Mode;
using tune::StorageError;
using tune::TrialStatus;
using tune::storage::ExperimentRecord;
using tune::storage::ExperimentStore;
using tune::storage::ResultRecord;
using tune::storage::TrialRecord;
using tune::test::Sql;
using tune::test::TempDir;

namespace {

ExperimentRecord experiment(Mode mode, std::string metric = "loss") {
  return {.name = "exp",
          .metric = std::move(metric),
          .mode = mode,
          .spec = Json{{"num_samples", 4}},
          .created_at = 1700000000.5,
          .status = ExperimentStatus::kRunning};
}

TrialRecord trial(int index, Json config = Json{{"lr", 0.1}}) {
  char id[32];
  std::snprintf(id, sizeof id, "exp_%05d", index);
  TrialRecord trial;
  trial.trial_id = id;
  trial.trial_index = index;
  trial.config = std::move(config);
  trial.status_reason = "created";
  trial.trial_dir = std::string("/runs/exp/trials/") + id;
  trial.created_at = 1700000001.0 + index;
  return trial;
}

ResultRecord result(const std::string& trial_id, int64_t iteration, Json metrics) {
  return {.trial_id = trial_id,
          .training_iteration = iteration,
          .timestamp = 1700000010.0 + iteration,
          .time_this_iter_s = 0.5,
          .time_total_s = 0.5 * iteration,
          .metrics = std::move(metrics)};
}

// Four trials whose last losses are 0.3, NaN, (no loss) and 0.7; trial 0 was
// at 0.9 and trial 3 at 0.1 earlier, so best by last and best overall differ.
void write_sweep(ExperimentStore& store, Mode mode) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  store.put_experiment(experiment(mode));
  for (int i = 0; i < 4; ++i) store.put_trial(trial(i, Json{{"lr", 0.1 * (i + 1)}}));
  store.append_result(result("exp_00000", 1, {{"loss", 0.9}}));
  store.append_result(result("exp_00000", 2, {{"loss", 0.3}}));
  store.append_result(result("exp_00001", 1, {{"loss", 0.05}}));
  store.append_result(result("exp_00001", 2, {{"loss", nan}}));
  store.append_result(result("exp_00002", 1, {{"accuracy", 0.99}}));
  store.append_result(result("exp_00003", 1, {{"loss", 0.1}}));
  store.append_result(result("exp_00003", 2, {{"loss", 0.7}}));
  store.flush();
}

}  // namespace

TEST_CASE("a store round-trips experiment, trials and results through a reopen") {
  TempDir dir;
  {
    ExperimentStore first = ExperimentStore::open(dir.path() / "exp");
    ExperimentStore store = std::move(first);  // the cached statements move with it
    store.put_experiment(experiment(Mode::kMax, "acc"));
    TrialRecord t = trial(0, Json{{"lr", 0.01}, {"model", {{"width", 64}}}});
    t.started_at = 1700000002.25;
    t.num_failures = 1;
    t.error = "boom at train.cpp:12";
    store.put_trial(t);
    store.append_result(result("exp_00000", 1, {{"acc", 0.5}, {"note", "warm"}}));
    store.append_result(result("exp_00000", 2, {{"acc", 0.75}}));
  }  // destroyed with an open batch: it commits

  ExperimentStore store = ExperimentStore::open(dir.path() / "exp");
  CHECK(store.path() == dir.path() / "exp" / "experiment.db");
  auto exp = store.experiment();
  REQUIRE(exp);
  CHECK(exp->name == "exp");
  CHECK(exp->metric == "acc");
  CHECK(exp->mode == Mode::kMax);
  CHECK(exp->spec == Json{{"num_samples", 4}});
  CHECK(exp->created_at == 1700000000.5);
  CHECK(exp->status == ExperimentStatus::kRunning);

  auto trials = store.trials();
  REQUIRE(trials.size() == 1);
  CHECK(trials[0].trial_id == "exp_00000");
  CHECK(trials[0].config == Json{{"lr", 0.01}, {"model", {{"width", 64}}}});
  CHECK(trials[0].status == TrialStatus::kPending);
  CHECK(trials[0].trial_dir == "/runs/exp/trials/exp_00000");
  CHECK(trials[0].started_at == 1700000002.25);
  CHECK_FALSE(trials[0].finished_at);
  CHECK(trials[0].num_failures == 1);
  CHECK(trials[0].error == "boom at train.cpp:12");

  auto results = store.results("exp_00000");
  REQUIRE(results.size() == 2);
  CHECK(results[0].training_iteration == 1);
  CHECK(results[0].metrics == Json{{"acc", 0.5}, {"note", "warm"}});
  CHECK(results[1].time_total_s == 1.0);
  CHECK(store.num_results() == 2);

  store.set_experiment_status(ExperimentStatus::kFinished);
  CHECK(store.experiment()->status == ExperimentStatus::kFinished);
  store.flush();
  CHECK(Sql(store.path()).scalar("SELECT status FROM experiment") == "FINISHED");  // its name
}

TEST_CASE("an experiment status the store does not know is a StorageError naming it") {
  TempDir dir;
  ExperimentStore store = ExperimentStore::open(dir.path());
  store.put_experiment(experiment(Mode::kMin));
  store.flush();
  Sql(store.path(), SQLITE_OPEN_READWRITE).exec("UPDATE experiment SET status = 'SLEEPING'");
  CHECK_THROWS_WITH_AS(store.experiment(), doctest::Contains("unknown status 'SLEEPING'"),
                       StorageError);
}

TEST_CASE("the database is in WAL mode with schema version 6") {
  TempDir dir;
  ExperimentStore::open(dir.path());
  Sql sql(dir.path() / "experiment.db");
  CHECK(sql.scalar("PRAGMA journal_mode") == "wal");
  CHECK(sql.scalar("PRAGMA user_version") == "6");
  CHECK(sql.scalar("SELECT value FROM schema_info WHERE key = 'schema_version'") == "6");
}

TEST_CASE("a trial's suggestion time reads back; a version 5 file gains the columns, empty") {
  TempDir dir;
  {
    ExperimentStore store = ExperimentStore::open(dir.path());
    store.put_experiment(experiment(Mode::kMin));
    store.put_trial(trial(0));
    store.put_trial(trial(1));
    store.flush();
  }
  {  // what schema version 5 wrote: no search time columns
    Sql sql(dir.path() / "experiment.db", SQLITE_OPEN_READWRITE);
    sql.exec(
        R"(ALTER TABLE trials DROP COLUMN suggest_s; ALTER TABLE trials DROP COLUMN model_fit_s;
                UPDATE schema_info SET value = '5'; PRAGMA user_version = 5;)");
  }
  CHECK_FALSE(ExperimentStore::open_read_only(dir.path()).trials().at(0).suggest_s);
  ExperimentStore store = ExperimentStore::open(dir.path());
  store.set_trial_search_time("exp_00000", 0.25, 0.125);
  store.set_trial_search_time("exp_00001", 0.5, std::nullopt);
  store.put_trial(trial(0));  // a later write of the row keeps them
  CHECK_THROWS_WITH_AS(store.set_trial_search_time("exp_00009", 1, 1),
                       doctest::Contains("no trial exp_00009"), StorageError);
  store.flush();
  const auto trials = ExperimentStore::open_read_only(dir.path()).trials();
  CHECK(trials.at(0).suggest_s == 0.25);
  CHECK(trials.at(0).model_fit_s == 0.125);
  CHECK(trials.at(1).suggest_s == 0.5);
  CHECK_FALSE(trials.at(1).model_fit_s);
  CHECK(Sql(dir.path() / "experiment.db").scalar("PRAGMA user_version") == "6");
}

TEST_CASE("results are visible to another connection after flush, not before") {
  TempDir dir;
  ExperimentStore writer = ExperimentStore::open(dir.path());
  writer.put_experiment(experiment(Mode::kMin));
  writer.put_trial(trial(0));
  writer.flush();

  ExperimentStore reader = ExperimentStore::open_read_only(dir.path());
  for (int i = 1; i <= 3; ++i) writer.append_result(result("exp_00000", i, {{"loss", 1.0 / i}}));
  CHECK(writer.num_results() == 3);  // the writer sees its own open batch
  CHECK(reader.num_results() == 0);
  writer.flush();
  CHECK(reader.num_results() == 3);
  CHECK(reader.results("exp_00000").back().metrics == Json{{"loss", 1.0 / 3}});
  CHECK_THROWS_AS(reader.put_trial(trial(1)), StorageError);
}

TEST_CASE("commit() leaves a long write-ahead log to checkpoint_if_due(); flush() copies it") {
  TempDir dir;
  ExperimentStore store = ExperimentStore::open(dir.path());
  store.put_experiment(experiment(Mode::kMin));
  store.put_trial(trial(0));
  store.flush();
  const fs::path db = dir.path() / "experiment.db";
  // Each batch writes far more than SQLite's auto-checkpoint size (1,000 pages of 4 KiB).
  const std::string note(8000, 'x');
  auto write_batch = [&](int first) {
    for (int i = first; i < first + 1000; ++i) {
      store.append_result(result("exp_00000", i, {{"loss", 1.0 / i}, {"note", note}}));
    }
  };
  write_batch(1);
  const auto before = fs::file_size(db);
  store.commit();
  CHECK(fs::file_size(db) == before);  // committed into the log alone
  CHECK(ExperimentStore::open_read_only(dir.path()).num_results() == 1000);
  store.checkpoint_if_due();
  const auto copied = fs::file_size(db);
  CHECK(copied > before + 1000 * note.size());

  write_batch(1001);
  store.flush();
  CHECK(fs::file_size(db) > copied + 1000 * note.size());
  CHECK(ExperimentStore::open_read_only(dir.path()).num_results() == 2000);
}

TEST_CASE("a result written twice for the same iteration is stored once") {
  TempDir dir;
  ExperimentStore store = ExperimentStore::open(dir.path());
  store.put_experiment(experiment(Mode::kMin));
  store.put_trial(trial(0));
  store.append_result(result("exp_00000", 1, {{"loss", 0.5}}));
  store.append_result(result("exp_00000", 1, {{"loss", 0.4}}));  // replayed after a restore
  store.flush();
  auto results = store.results("exp_00000");
  REQUIRE(results.size() == 1);
  CHECK(results[0].metrics == Json{{"loss", 0.5}});  // the first one stays
}

TEST_CASE("a result for an unknown trial is refused") {
  TempDir dir;
  ExperimentStore store = ExperimentStore::open(dir.path());
  CHECK_THROWS_WITH_AS(store.append_result(result("nobody", 1, {{"loss", 1}})),
                       doctest::Contains("FOREIGN KEY"), StorageError);
  CHECK_THROWS_AS(store.set_trial_status("nobody", TrialStatus::kRunning, "", 1), StorageError);
  store.put_trial(trial(0));  // the batch survives the failed statements
  store.flush();
  CHECK(store.trials().size() == 1);
}

TEST_CASE("status changes are recorded in trial_events with their reasons, reasons alone are not") {
  TempDir dir;
  ExperimentStore store = ExperimentStore::open(dir.path());
  store.put_trial(trial(0));
  store.set_trial_status("exp_00000", TrialStatus::kPending, "no free CPUs", 10);  // reason only
  CHECK(store.trials().at(0).status_reason == "no free CPUs");
  store.set_trial_status("exp_00000", TrialStatus::kRunning, "started", 12);
  store.set_trial_status("exp_00000", TrialStatus::kPaused, "paused by PBT", 13);
  store.set_trial_status("exp_00000", TrialStatus::kRunning, "resumed", 14);
  store.set_trial_status("exp_00000", TrialStatus::kTerminated, "max iterations", 15);
  store.flush();

  Sql sql(store.path());
  auto events = sql.rows(
      "SELECT at, from_status, to_status, reason FROM trial_events "
      "WHERE trial_id = 'exp_00000' ORDER BY id");
  std::vector<std::vector<std::string>> expected{
      {"1700000001.0", "NULL", "PENDING", "created"},
      {"12.0", "PENDING", "RUNNING", "started"},
      {"13.0", "RUNNING", "PAUSED", "paused by PBT"},
      {"14.0", "PAUSED", "RUNNING", "resumed"},
      {"15.0", "RUNNING", "TERMINATED", "max iterations"},
  };
  CHECK(events == expected);

  TrialRecord t = store.trials().at(0);
  CHECK(t.status == TrialStatus::kTerminated);
  CHECK(t.status_reason == "max iterations");
  CHECK(t.started_at == 12.0);  // the first start, not the resume
  CHECK(t.finished_at == 15.0);
}

TEST_CASE("best_trial picks by each trial's last result, skipping NaN and missing metrics") {
  TempDir dir;
  SUBCASE("min") {
    ExperimentStore store = ExperimentStore::open(dir.path());
    write_sweep(store, Mode::kMin);
    auto best = store.best_trial();
    REQUIRE(best);
    CHECK(best->trial.trial_id == "exp_00000");  // 0.3; trial 1's NaN is not a minimum
    CHECK(best->value == doctest::Approx(0.3));
    CHECK(best->last_metrics == Json{{"loss", 0.3}});
    CHECK(best->trial.config == Json{{"lr", 0.1}});

    Sql sql(store.path());
    auto rows =
        sql.rows("SELECT trial_id, metric, metric_value, training_iteration FROM best_trial");
    CHECK(rows == std::vector<std::vector<std::string>>{{"exp_00000", "loss", "0.3", "2"}});
  }
  SUBCASE("max") {
    ExperimentStore store = ExperimentStore::open(dir.path());
    write_sweep(store, Mode::kMax);
    auto best = store.best_trial();
    REQUIRE(best);
    CHECK(best->trial.trial_id == "exp_00003");  // 0.7 last; 0.9 was only trial 0's first
    CHECK(best->value == doctest::Approx(0.7));
  }
  SUBCASE("no finite value") {
    ExperimentStore store = ExperimentStore::open(dir.path());
    store.put_experiment(experiment(Mode::kMin));
    store.put_trial(trial(0));
    store.append_result(result("exp_00000", 1, {{"loss", "high"}}));
    CHECK_FALSE(store.best_trial());
  }
}

TEST_CASE("a trial in ERROR is never the best: best_trial, best_result and pareto_front skip it") {
  TempDir dir;
  ExperimentStore store = ExperimentStore::open(dir.path());
  ExperimentRecord two = experiment(Mode::kMin);
  two.objectives = {{"loss", Mode::kMin}, {"latency", Mode::kMin}};
  store.put_experiment(two);
  TrialRecord failed = trial(0);
  failed.status = TrialStatus::kError;  // its loss of 1 is where it broke
  store.put_trial(failed);
  TrialRecord done = trial(1);
  done.status = TrialStatus::kTerminated;
  store.put_trial(done);
  store.append_result(result("exp_00000", 1, {{"loss", 1}, {"latency", 1}}));
  store.append_result(result("exp_00001", 1, {{"loss", 5}, {"latency", 5}}));
  store.flush();

  REQUIRE(store.best_trial());
  CHECK(store.best_trial()->trial.trial_id == "exp_00001");
  CHECK(store.best_trial()->value == doctest::Approx(5));
  Sql sql(store.path());
  CHECK(sql.scalar("SELECT trial_id FROM best_trial") == "exp_00001");
  CHECK(sql.scalar("SELECT trial_id FROM best_result") == "exp_00001");
  CHECK(sql.rows("SELECT trial_id, rank FROM pareto_front") ==
        std::vector<std::vector<std::string>>{{"exp_00001", "0"}});
  const auto front = store.pareto_front(true);
  REQUIRE(front.size() == 1);
  CHECK(front[0].trial.trial_id == "exp_00001");

  // With nothing but failed trials there is no best.
  done.status = TrialStatus::kError;
  store.put_trial(done);
  store.flush();
  CHECK_FALSE(store.best_trial());
  CHECK(sql.rows("SELECT * FROM best_result").empty());
}

TEST_CASE("ties in best_trial go to the earlier trial") {
  TempDir dir;
  ExperimentStore store = ExperimentStore::open(dir.path());
  store.put_experiment(experiment(Mode::kMin));
  for (int i : {2, 0, 1}) store.put_trial(trial(i));
  for (int i : {2, 0, 1}) store.append_result(result(trial(i).trial_id, 1, {{"loss", 1}}));
  CHECK(store.best_trial()->trial.trial_id == "exp_00000");
}

TEST_CASE("all_results, last_results and best_result answer a user's SQL") {
  TempDir dir;
  ExperimentStore store = ExperimentStore::open(dir.path());
  write_sweep(store, Mode::kMin);
  Sql sql(store.path());

  CHECK(sql.scalar("SELECT count(*) FROM all_results") == "7");
  auto first = sql.rows(
      "SELECT trial_id, training_iteration, time_total_s, metrics, config, status, metric_value "
      "FROM all_results ORDER BY trial_id, training_iteration LIMIT 1");
  CHECK(first == std::vector<std::vector<std::string>>{{"exp_00000", "1", "0.5", R"({"loss":0.9})",
                                                        R"({"lr":0.1})", "PENDING", "0.9"}});
  // NaN is stored as JSON null; a trial without the metric has no value.
  CHECK(sql.scalar("SELECT metrics FROM all_results WHERE trial_id = 'exp_00001' AND "
                   "training_iteration = 2") == R"({"loss":null})");
  CHECK(sql.scalar("SELECT count(*) FROM all_results WHERE metric_value IS NULL") == "2");

  auto last = sql.rows(
      "SELECT trial_id, training_iteration, metric_value FROM last_results "
      "ORDER BY trial_id");
  CHECK(last == std::vector<std::vector<std::string>>{{"exp_00000", "2", "0.3"},
                                                      {"exp_00001", "2", "NULL"},
                                                      {"exp_00002", "1", "NULL"},
                                                      {"exp_00003", "2", "0.7"}});

  auto best =
      sql.rows("SELECT trial_id, training_iteration, metric, metric_value FROM best_result");
  CHECK(best == std::vector<std::vector<std::string>>{{"exp_00001", "1", "loss", "0.05"}});
}

TEST_CASE("metric names with dots are looked up whole") {
  TempDir dir;
  ExperimentStore store = ExperimentStore::open(dir.path());
  store.put_experiment(experiment(Mode::kMax, "val.acc"));
  store.put_trial(trial(0));
  store.append_result(result("exp_00000", 1, {{"val.acc", 0.8}, {"val", {{"acc", 0.1}}}}));
  REQUIRE(store.best_trial());
  CHECK(store.best_trial()->value == doctest::Approx(0.8));
}

TEST_CASE("a database from a newer tunerun refuses to open") {
  TempDir dir;
  ExperimentStore::open(dir.path());
  {
    Sql sql(dir.path() / "experiment.db", SQLITE_OPEN_READWRITE);
    sql.exec("PRAGMA user_version = 7");
    sql.exec("UPDATE schema_info SET value = '7' WHERE key = 'schema_version'");
  }
  std::string expected = (dir.path() / "experiment.db").string() +
                         " has schema version 7; this tunerun understands up to 6";
  CHECK_THROWS_WITH_AS(ExperimentStore::open(dir.path()), expected.c_str(), StorageError);
  CHECK_THROWS_WITH_AS(ExperimentStore::open_read_only(dir.path()), expected.c_str(), StorageError);
}

TEST_CASE("open_read_only on a missing experiment throws and creates nothing") {
  TempDir dir;
  fs::path missing = dir.path() / "nope";
  CHECK_THROWS_WITH_AS(ExperimentStore::open_read_only(missing),
                       doctest::Contains("no experiment database at"), StorageError);
  CHECK_FALSE(fs::exists(missing));
}

TEST_CASE("a reader inside a read transaction does not block the writer") {
  TempDir dir;
  ExperimentStore writer = ExperimentStore::open(dir.path());
  writer.put_experiment(experiment(Mode::kMin));
  writer.put_trial(trial(0));
  writer.append_result(result("exp_00000", 1, {{"loss", 1}}));
  writer.flush();

  Sql reader(writer.path());
  reader.exec("BEGIN");
  CHECK(reader.scalar("SELECT count(*) FROM results") == "1");  // holds a snapshot

  writer.append_result(result("exp_00000", 2, {{"loss", 0.5}}));
  writer.flush();
  // Committed while the reader's transaction is still open: a third
  // connection sees it.
  CHECK(Sql(writer.path()).scalar("SELECT count(*) FROM results") == "2");

  CHECK(reader.scalar("SELECT count(*) FROM results") == "1");  // still its snapshot
  reader.exec("COMMIT");
  CHECK(reader.scalar("SELECT count(*) FROM results") == "2");
}
