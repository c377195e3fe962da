// ExperimentStore: opening (and upgrading) the file, the write batches, and
// the writes; its reads are in experiment_reads.cpp.
#include "storage/experiment_store.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <utility>

#include "core/errors.h"
#include "storage/internal/rows.h"
#include "storage/json_column.h"
#include "storage/saved_state.h"
#include "storage/schema_sql.h"  // generated from schema.sql
#include "storage/statement.h"

namespace tune::storage {
namespace {

using internal::bind_json;
using internal::kTrialColumns;

constexpr const char* kDatabaseFile = "experiment.db";
constexpr int kBusyTimeoutMs = 5000;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The first version with the *_nonfinite columns (storage/json_column.h).
constexpr int kNonfiniteVersion = 2;

// The first version with the objectives table and the pareto_front view.
constexpr int kObjectivesVersion = 3;

// The first version with trials' suggest_s and model_fit_s.
constexpr int kSearchTimeVersion = 6;

// Version 1 -> 2.
constexpr const char* kUpgradeFromVersion1 = R"(
    ALTER TABLE trials ADD COLUMN config_nonfinite TEXT;
    ALTER TABLE results ADD COLUMN metrics_nonfinite TEXT;
    ALTER TABLE exploits ADD COLUMN old_config_nonfinite TEXT;
    ALTER TABLE exploits ADD COLUMN new_config_nonfinite TEXT;)";

// Version 5 -> 6 (and any older file, which lacks them too).
constexpr const char* kUpgradeToSearchTimes = R"(
    ALTER TABLE trials ADD COLUMN suggest_s REAL;
    ALTER TABLE trials ADD COLUMN model_fit_s REAL;)";

// Any older version: the views, which schema.sql then recreates as this
// version has them (version 2 -> 3 adds their feasible column, 3 -> 4 reads
// trial_last_result, which schema.sql fills from the results, 4 -> 5 skips
// trials in ERROR).
constexpr const char* kDropViews = R"(
    DROP VIEW IF EXISTS pareto_front;
    DROP VIEW IF EXISTS objective_values;
    DROP VIEW IF EXISTS best_result;
    DROP VIEW IF EXISTS best_trial;
    DROP VIEW IF EXISTS last_results;
    DROP VIEW IF EXISTS all_results;)";

sqlite3* open_connection(const std::filesystem::path& file, int flags) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    throw StorageError(fmt::format("{}: cannot open: {}", file.string(), message));
  }
  sqlite3_extended_result_codes(db, 1);
  return db;
}

int user_version(sqlite3* db) {
  Statement query(db, "PRAGMA user_version");
  return query.step() ? static_cast<int>(query.column_int(0)) : 0;
}

void check_version(sqlite3* db, const std::filesystem::path& file) {
  int version = user_version(db);
  if (version > kSchemaVersion) {
    throw StorageError(fmt::format("{} has schema version {}; this tunerun understands up to {}",
                                   file.string(), version, kSchemaVersion));
  }
}

// all_results.metric_value of a result: the experiment metric's value
// when it is a finite number (none without an experiment row).
std::optional<double> metric_value(const Json& metrics, const std::optional<std::string>& metric) {
  if (!metric || !metrics.is_object()) return std::nullopt;
  const auto it = metrics.find(*metric);
  if (it == metrics.end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
}

// all_results.feasible of a result: every value under "constraints" (the
// number itself, or each item of a list or object) is a number <= 0.
bool feasible(const Json& metrics) {
  if (!metrics.is_object()) return true;
  const auto it = metrics.find("constraints");
  if (it == metrics.end()) return true;
  auto satisfied = [](const Json& c) {
    return c.is_number() && !std::isnan(c.get<double>()) && c.get<double>() <= 0;
  };
  if (!it->is_structured()) return satisfied(*it);
  return std::all_of(it->begin(), it->end(), satisfied);
}

// SQLite's auto-checkpoint size, in pages of the write-ahead log: what
// checkpoint_if_due() keeps it under.
constexpr int kCheckpointPages = 1000;

// SQLite's WAL hook: notes the log's length after each commit in place of
// SQLite's own auto-checkpoint, which would copy it inside the commit.
int note_wal_pages(void* pages, sqlite3*, const char*, int length) {
  *static_cast<int*>(pages) = length;
  return SQLITE_OK;
}

void use_wal(sqlite3* db, const std::filesystem::path& file) {
  Statement journal(db, "PRAGMA journal_mode = WAL");
  if (!journal.step() || journal.column_text(0) != "wal") {
    throw StorageError(fmt::format("{}: cannot switch to WAL mode", file.string()));
  }
}

// A file with tables but no experiment table is another program's
// database; read-only, a file without one holds no experiment to read.
void check_ours(sqlite3* db, const std::filesystem::path& file, bool read_only) {
  Statement tables(db, R"(
      SELECT count(*), count(*) FILTER (WHERE name = 'experiment')
      FROM sqlite_master WHERE type = 'table')");
  tables.step();
  if (tables.column_int(1) > 0 || (tables.column_int(0) == 0 && !read_only)) return;
  throw StorageError(fmt::format(
      "{} is not a readable tunerun database (it has no experiment table)", file.string()));
}

}  // namespace

// The writes the controller makes for every result and state change.
struct ExperimentStore::Statements {
  explicit Statements(sqlite3* db)
      : trial_status(db, "SELECT status, status_reason FROM trials WHERE trial_id = ?1"),
        put_trial(db, fmt::format(R"(
            INSERT INTO trials ({})
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
            ON CONFLICT (trial_id) DO UPDATE SET
              trial_index = excluded.trial_index, config = excluded.config,
              status = excluded.status, status_reason = excluded.status_reason,
              trial_dir = excluded.trial_dir, created_at = excluded.created_at,
              started_at = excluded.started_at, finished_at = excluded.finished_at,
              last_iteration = excluded.last_iteration,
              num_failures = excluded.num_failures, error = excluded.error,
              config_nonfinite = excluded.config_nonfinite)",
                                  kTrialColumns)),
        set_trial_status(db, R"(
            UPDATE trials SET status = ?2, status_reason = ?3,
              started_at = CASE WHEN ?2 = 'RUNNING' THEN coalesce(started_at, ?4)
                                ELSE started_at END,
              finished_at = CASE WHEN ?2 IN ('TERMINATED', 'ERROR') THEN ?4 END
            WHERE trial_id = ?1)"),
        set_search_time(db,
                        "UPDATE trials SET suggest_s = ?2, model_fit_s = ?3 WHERE trial_id = ?1"),
        add_event(db, R"(
            INSERT INTO trial_events (trial_id, at, from_status, to_status, reason)
            VALUES (?1, ?2, ?3, ?4, ?5))"),
        // OR IGNORE: a result written again (a replay after restore) keeps
        // the first row; the schema promises no duplicates.
        append_result(db, R"(
            INSERT OR IGNORE INTO results (trial_id, training_iteration, timestamp,
                                           time_this_iter_s, time_total_s, metrics,
                                           metrics_nonfinite)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7))"),
        keep_last(db, R"(
            INSERT INTO trial_last_result (trial_id, training_iteration, metric_value, feasible,
                                           num_results)
            VALUES (?1, ?2, ?3, ?4, 1)
            ON CONFLICT (trial_id) DO UPDATE SET
              num_results = trial_last_result.num_results + 1,
              training_iteration = max(excluded.training_iteration,
                                       trial_last_result.training_iteration),
              metric_value = iif(excluded.training_iteration > trial_last_result.training_iteration,
                                 excluded.metric_value, trial_last_result.metric_value),
              feasible = iif(excluded.training_iteration > trial_last_result.training_iteration,
                             excluded.feasible, trial_last_result.feasible))") {}

  Statement trial_status;
  Statement put_trial;
  Statement set_trial_status;
  Statement set_search_time;
  Statement add_event;
  Statement append_result;
  Statement keep_last;
};

ExperimentStore::ExperimentStore(std::filesystem::path path, sqlite3* db)
    : path_(std::move(path)), db_(db) {}

ExperimentStore::ExperimentStore(ExperimentStore&& other) noexcept
    : path_(std::move(other.path_)),
      db_(std::exchange(other.db_, nullptr)),
      in_batch_(std::exchange(other.in_batch_, false)),
      nonfinite_columns_(other.nonfinite_columns_),
      objectives_table_(other.objectives_table_),
      search_time_columns_(other.search_time_columns_),
      statements_(std::move(other.statements_)),
      wal_pages_(std::move(other.wal_pages_)),
      metric_(std::move(other.metric_)) {}

ExperimentStore& ExperimentStore::operator=(ExperimentStore&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    db_ = std::exchange(other.db_, nullptr);
    in_batch_ = std::exchange(other.in_batch_, false);
    nonfinite_columns_ = other.nonfinite_columns_;
    objectives_table_ = other.objectives_table_;
    search_time_columns_ = other.search_time_columns_;
    statements_ = std::move(other.statements_);
    wal_pages_ = std::move(other.wal_pages_);
    metric_ = std::move(other.metric_);
  }
  return *this;
}

ExperimentStore::~ExperimentStore() { close(); }

void ExperimentStore::close() noexcept {
  if (db_ == nullptr) return;
  if (in_batch_ && sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    // A destructor cannot throw; say what was lost rather than hide it.
    std::fprintf(stderr, "tunerun: %s: could not commit pending writes: %s\n", path_.c_str(),
                 sqlite3_errmsg(db_));
  }
  statements_.reset();  // finalized before the connection closes
  sqlite3_close(db_);   // rolls back a transaction that did not commit
  db_ = nullptr;
  in_batch_ = false;
}

ExperimentStore ExperimentStore::open(const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw StorageError(fmt::format("cannot create {}: {}", dir.string(), error.message()));
  }
  std::filesystem::path file = dir / kDatabaseFile;
  // One writer connection, used by one thread at a time (the controller's
  // loop): it needs none of SQLite's per-call locking.
  ExperimentStore store(file, open_connection(file, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                                        SQLITE_OPEN_NOMUTEX));
  sqlite3_busy_timeout(store.db_, kBusyTimeoutMs);
  check_version(store.db_, file);
  check_ours(store.db_, file, false);

  use_wal(store.db_, file);
  exec(store.db_, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON");
  store.wal_pages_ = std::make_unique<int>(0);
  sqlite3_wal_hook(store.db_, note_wal_pages, store.wal_pages_.get());

  // A file at 0 is new. An older version is upgraded in the same
  // transaction that applies the schema. The schema only adds what is
  // missing, so it is applied to a file of this version too: one written by
  // an earlier build gains the indexes added since.
  const int version = user_version(store.db_);
  exec(store.db_, "BEGIN IMMEDIATE");  // a failure leaves it to close()'s rollback
  if (version == 1) exec(store.db_, kUpgradeFromVersion1);
  if (version >= 1 && version < kSearchTimeVersion) exec(store.db_, kUpgradeToSearchTimes);
  if (version >= 1 && version < kSchemaVersion) exec(store.db_, kDropViews);
  exec(store.db_, internal::kSchemaSql);
  exec(store.db_, "COMMIT");
  store.nonfinite_columns_ = true;
  store.objectives_table_ = true;
  store.search_time_columns_ = true;
  return store;
}

ExperimentStore ExperimentStore::open_read_only(const std::filesystem::path& dir) {
  std::filesystem::path file = dir / kDatabaseFile;
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    throw StorageError(fmt::format("no experiment database at {}", file.string()));
  }
  ExperimentStore store(file, open_connection(file, SQLITE_OPEN_READONLY));
  sqlite3_busy_timeout(store.db_, kBusyTimeoutMs);
  check_version(store.db_, file);
  check_ours(store.db_, file, true);
  // A version 1 file cannot be upgraded read-only: its reads select NULL.
  store.nonfinite_columns_ = user_version(store.db_) >= kNonfiniteVersion;
  store.objectives_table_ = user_version(store.db_) >= kObjectivesVersion;
  store.search_time_columns_ = user_version(store.db_) >= kSearchTimeVersion;
  return store;
}

void ExperimentStore::begin_batch() {
  if (in_batch_) return;
  if (sqlite3_db_readonly(db_, "main") == 1) {
    throw StorageError(fmt::format("{}: opened read-only; cannot write", path_.string()));
  }
  if (!statements_) {
    statements_ = std::make_unique<Statements>(db_);
    Statement metric(db_, "SELECT metric FROM experiment WHERE id = 1");
    metric_ =
        metric.step() && !metric.is_null(0) ? std::optional(metric.column_text(0)) : std::nullopt;
  }
  exec(db_, "BEGIN IMMEDIATE");
  in_batch_ = true;
}

void ExperimentStore::flush() {
  commit();
  checkpoint_if_due();
}

void ExperimentStore::commit() {
  if (!in_batch_) return;
  if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    in_batch_ = sqlite3_get_autocommit(db_) == 0;  // a failed COMMIT may leave it open
    throw_error(db_, "COMMIT");
  }
  in_batch_ = false;
}

void ExperimentStore::checkpoint_if_due() {
  if (!wal_pages_ || *wal_pages_ < kCheckpointPages || in_batch_) return;
  *wal_pages_ = 0;
  // SQLITE_BUSY: another connection is checkpointing; the next commit tries again.
  const int rc =
      sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  if (rc != SQLITE_OK && rc != SQLITE_BUSY) throw_error(db_, "checkpoint");
}

void ExperimentStore::put_experiment(const ExperimentRecord& experiment) {
  begin_batch();
  Statement put(db_, R"(
      INSERT INTO experiment (id, name, metric, mode, spec, created_at, status, updated_at)
      VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7)
      ON CONFLICT (id) DO UPDATE SET
        name = excluded.name, metric = excluded.metric, mode = excluded.mode,
        spec = excluded.spec, created_at = excluded.created_at, status = excluded.status,
        updated_at = excluded.updated_at)");
  put.bind(1, experiment.name)
      .bind(2, experiment.metric)
      .bind(3, to_string(experiment.mode))
      .bind(4, dump_json_text(experiment.spec))
      .bind(5, experiment.created_at)
      .bind(6, to_string(experiment.status))
      .bind(7, now_seconds())
      .run();
  metric_ = experiment.metric;
  std::vector<Objective> objectives = experiment.objectives;
  if (objectives.empty() && !experiment.metric.empty()) {
    objectives.push_back({experiment.metric, experiment.mode});
  }
  exec(db_, "DELETE FROM objectives");
  Statement add(db_, "INSERT INTO objectives (position, metric, mode) VALUES (?1, ?2, ?3)");
  for (size_t i = 0; i < objectives.size(); ++i) {
    add.bind(1, static_cast<int64_t>(i))
        .bind(2, objectives[i].metric)
        .bind(3, to_string(objectives[i].mode))
        .run();
  }
}

void ExperimentStore::set_experiment_status(ExperimentStatus status) {
  begin_batch();
  Statement update(db_, "UPDATE experiment SET status = ?1, updated_at = ?2 WHERE id = 1");
  update.bind(1, to_string(status)).bind(2, now_seconds()).run();
  if (sqlite3_changes(db_) == 0) {
    throw StorageError(
        fmt::format("{}: set_experiment_status before put_experiment", path_.string()));
  }
}

void ExperimentStore::put_trial(const TrialRecord& trial, std::optional<double> at) {
  begin_batch();
  Statement& query = statements_->trial_status;
  query.bind(1, trial.trial_id);
  bool is_new = !query.step();
  std::string old_status = is_new ? std::string() : query.column_text(0);
  query.reset();

  std::string status(to_string(trial.status));
  statements_->put_trial.bind(1, trial.trial_id)
      .bind(2, trial.trial_index)
      .bind(4, status)
      .bind(5, trial.status_reason)
      .bind(6, trial.trial_dir)
      .bind(7, trial.created_at)
      .bind(8, trial.started_at)
      .bind(9, trial.finished_at)
      .bind(10, trial.last_iteration)
      .bind(11, trial.num_failures)
      .bind(12, trial.error);
  bind_json(statements_->put_trial, 3, 13, trial.config);
  statements_->put_trial.run();

  if (is_new || old_status != status) {
    Statement& event = statements_->add_event;
    event.bind(1, trial.trial_id).bind(2, is_new ? trial.created_at : at.value_or(now_seconds()));
    if (is_new) {
      event.bind_null(3);  // from nothing: created
    } else {
      event.bind(3, old_status);
    }
    event.bind(4, status).bind(5, trial.status_reason).run();
  }
}

void ExperimentStore::set_trial_status(const std::string& trial_id, TrialStatus status,
                                       const std::string& reason, double at) {
  begin_batch();
  Statement& query = statements_->trial_status;
  query.bind(1, trial_id);
  if (!query.step()) {
    query.reset();
    throw StorageError(
        fmt::format("{}: set_trial_status: no trial '{}'", path_.string(), trial_id));
  }
  std::string old_status = query.column_text(0);
  query.reset();

  std::string new_status(to_string(status));
  statements_->set_trial_status.bind(1, trial_id).bind(2, new_status).bind(3, reason).bind(4, at);
  statements_->set_trial_status.run();
  // Only changes of status are history; the row holds the current reason.
  if (old_status != new_status) {
    statements_->add_event.bind(1, trial_id)
        .bind(2, at)
        .bind(3, old_status)
        .bind(4, new_status)
        .bind(5, reason)
        .run();
  }
}

void ExperimentStore::set_trial_search_time(const std::string& trial_id, double suggest_s,
                                            const std::optional<double>& model_fit_s) {
  begin_batch();
  statements_->set_search_time.bind(1, trial_id).bind(2, suggest_s).bind(3, model_fit_s);
  statements_->set_search_time.run();
  if (sqlite3_changes(db_) == 0) {
    throw StorageError(
        fmt::format("{}: no trial {} to record a suggestion time for", path_.string(), trial_id));
  }
}

void ExperimentStore::add_trial_note(const std::string& trial_id, TrialStatus status,
                                     const std::string& reason, double at) {
  begin_batch();
  const std::string text(to_string(status));
  statements_->add_event.bind(1, trial_id).bind(2, at).bind(3, text).bind(4, text).bind(5, reason);
  statements_->add_event.run();
}

void ExperimentStore::append_result(const ResultRecord& result) {
  begin_batch();
  statements_->append_result.bind(1, result.trial_id)
      .bind(2, result.training_iteration)
      .bind(3, result.timestamp)
      .bind(4, result.time_this_iter_s)
      .bind(5, result.time_total_s);
  bind_json(statements_->append_result, 6, 7,
            result.metrics.is_null() ? Json::object() : result.metrics);
  statements_->append_result.run();
  if (sqlite3_changes(db_) == 0) return;  // written before: neither last nor counted again
  statements_->keep_last.bind(1, result.trial_id)
      .bind(2, result.training_iteration)
      .bind(3, metric_value(result.metrics, metric_))
      .bind(4, static_cast<int64_t>(feasible(result.metrics)))
      .run();
}

void ExperimentStore::add_checkpoint(const CheckpointRecord& c) {
  begin_batch();
  Statement insert(db_, R"(
      INSERT OR REPLACE INTO checkpoints (trial_id, training_iteration, path, created_at, source)
      VALUES (?1, ?2, ?3, ?4, ?5))");
  insert.bind(1, c.trial_id)
      .bind(2, c.training_iteration)
      .bind(3, c.path)
      .bind(4, c.created_at)
      .bind(5, c.source)
      .run();
}

void ExperimentStore::add_exploit(const ExploitRecord& e) {
  begin_batch();
  Statement insert(db_, R"(
      INSERT INTO exploits (trial_id, donor_id, training_iteration, donor_iteration, at,
                            old_config, old_config_nonfinite, new_config, new_config_nonfinite)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9))");
  insert.bind(1, e.trial_id)
      .bind(2, e.donor_id)
      .bind(3, e.training_iteration)
      .bind(4, e.donor_iteration)
      .bind(5, e.at);
  bind_json(insert, 6, 7, e.old_config);
  bind_json(insert, 8, 9, e.new_config);
  insert.run();
}

void ExperimentStore::add_placement(const PlacementRecord& p) {
  begin_batch();
  Statement insert(db_, R"(
      INSERT INTO placements (trial_id, attempt, rank, host, step, at)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6))");
  insert.bind(1, p.trial_id)
      .bind(2, p.attempt)
      .bind(3, p.rank)
      .bind(4, p.host)
      .bind(5, p.step)
      .bind(6, p.at)
      .run();
}

void ExperimentStore::remove_checkpoint(const std::string& trial_id, int64_t iteration) {
  begin_batch();
  Statement remove(db_, "DELETE FROM checkpoints WHERE trial_id = ?1 AND training_iteration = ?2");
  remove.bind(1, trial_id).bind(2, iteration).run();
}

void ExperimentStore::remove_results_after(const std::string& trial_id, int64_t iteration) {
  begin_batch();
  Statement remove(db_, "DELETE FROM results WHERE trial_id = ?1 AND training_iteration > ?2");
  remove.bind(1, trial_id).bind(2, iteration).run();
}

void ExperimentStore::put_state(const std::string& key, const Json& value) {
  put_state_parts(key, StateParts{.head = value});
}

void ExperimentStore::put_state_parts(const std::string& key, const StateParts& parts) {
  begin_batch();
  write_saved_state(db_, key, parts, now_seconds());
}

std::optional<Json> ExperimentStore::state(const std::string& key) const {
  return read_saved_state(db_, key, path_.string());
}

}  // namespace tune::storage
