// ExperimentStore: the SQLite file that holds one experiment.
//
// Layout: <storage_path>/<experiment>/experiment.db (WAL mode). The
// controller is the only writer; any number of readers (the sqlite3 CLI, a
// notebook, `tunerun status`) may read while it runs and never block it.
// The schema and its views are documented in storage/schema.sql, and are a
// user-facing contract: columns are added, never renamed or removed, and
// schema_version says which revision a file has.
//
// Writes are batched: every write joins the open transaction (one is begun
// on demand); flush() commits it. The controller flushes once per event-loop
// turn, before it answers the workers whose reports the batch holds, so an
// acknowledged result is on disk (WAL, synchronous=NORMAL: survives a crash
// of any process; a power loss may drop the last commits).
//
// A commit that leaves the write-ahead log longer than SQLite's
// auto-checkpoint size (1,000 pages) copies the log into the database file
// (a checkpoint), which waits for the disk twice (fsync): tens of ms on a
// busy one. commit() leaves that to checkpoint_if_due(), which the
// controller calls once its answers are sent, so that no answer waits for
// a checkpoint.
//
// NaN and ±infinity in configs and metrics read back as written: how they
// are stored (valid JSON plus a side column) is in storage/json_column.h.
//
// Not thread-safe: one store object per thread. Errors throw StorageError
// naming the database path and SQLite's message.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/state_parts.h"
#include "core/types.h"

struct sqlite3;  // <sqlite3.h>: only storage/*.cpp need SQLite's API

namespace tune::storage {

inline constexpr int kSchemaVersion = 6;

struct ExperimentRecord {
  std::string name;
  std::string metric;  // may be empty when the sweep sets none
  Mode mode = Mode::kMin;
  Json spec;              // the whole sweep specification, for display and resume
  double created_at = 0;  // unix seconds
  ExperimentStatus status = ExperimentStatus::kRunning;  // stored as its name ("RUNNING"...)
  // Several objectives, all of them in order (metric and mode hold the
  // first); empty with one objective or none. Stored in the objectives table.
  std::vector<Objective> objectives;
};

struct TrialRecord {
  std::string trial_id;  // deterministic: "<experiment>_<index:05d>"
  int64_t trial_index = 0;
  Json config;
  TrialStatus status = TrialStatus::kPending;
  std::string status_reason;  // why it is in that state (shown by `tunerun status`)
  std::string trial_dir;
  double created_at = 0;
  std::optional<double> started_at;
  std::optional<double> finished_at;
  int64_t last_iteration = 0;
  int64_t num_failures = 0;
  std::string error;  // message and where, for ERROR
  // The searcher's suggest call that made the trial, in seconds, and the
  // part of it spent fitting the searcher's model (search::Suggestion); unset
  // when not recorded (a file older than schema version 6) or, for the fit,
  // when the searcher fitted no model for it.
  std::optional<double> suggest_s;
  std::optional<double> model_fit_s;
};

struct ResultRecord {
  std::string trial_id;
  int64_t training_iteration = 0;
  double timestamp = 0;  // unix seconds at the controller when iteration completed
  double time_this_iter_s = 0;
  double time_total_s = 0;
  Json metrics;  // the user's metrics (JSON object), auto-filled fields excluded
};

struct CheckpointRecord {
  std::string trial_id;
  int64_t training_iteration = 0;
  std::string path;
  double created_at = 0;
  std::string source = "report";  // or "clone of TRIAL_ID"
};

struct PlacementRecord {
  std::string trial_id;
  int64_t attempt = 0;
  int64_t rank = 0;
  std::string host;
  std::string step;  // "JOB.STEP" in a Slurm job step; else empty
  double at = 0;
};

struct ExploitRecord {
  std::string trial_id;  // the recipient
  std::string donor_id;
  int64_t training_iteration = 0;  // the recipient's, when it paused
  int64_t donor_iteration = 0;     // the cloned checkpoint's
  Json old_config;
  Json new_config;
  double at = 0;
};

class ExperimentStore {
 public:
  // Opens or creates <dir>/experiment.db (creating `dir`), sets WAL mode and
  // applies the schema, upgrading an older file in place. Throws
  // StorageError if the file has a schema_version newer than this build
  // understands.
  static ExperimentStore open(const std::filesystem::path& dir);

  // Opens an existing database read-only for queries (status, best, results);
  // an older file is read as it is, NaN and infinity as null. Throws
  // StorageError if it does not exist.
  static ExperimentStore open_read_only(const std::filesystem::path& dir);

  ExperimentStore(ExperimentStore&& other) noexcept;
  ExperimentStore& operator=(ExperimentStore&& other) noexcept;
  ~ExperimentStore();

  const std::filesystem::path& path() const { return path_; }

  // --- writes (batched until flush) ---
  void put_experiment(const ExperimentRecord& experiment);  // insert or replace
  void set_experiment_status(ExperimentStatus status);
  // Insert or replace. A new trial, or a status different from the stored
  // one, is recorded in trial_events (at created_at for a new trial, else at
  // `at`, default now). A change of the reason alone is not an event: the
  // row's status_reason holds the current one.
  void put_trial(const TrialRecord& trial, std::optional<double> at = std::nullopt);
  // Changes a trial's status and reason; a new status is recorded in
  // trial_events (with from/to status, reason and time). Also sets
  // started_at on the first RUNNING, and finished_at to `at` when the status
  // is TERMINATED or ERROR (NULL otherwise). Throws for an unknown trial.
  void set_trial_status(const std::string& trial_id, TrialStatus status, const std::string& reason,
                        double at);
  // A note in trial_events that leaves the status as it is (from_status =
  // to_status = `status`), e.g. a checkpoint found missing.
  void add_trial_note(const std::string& trial_id, TrialStatus status, const std::string& reason,
                      double at);
  // Records the suggest call that made the trial (TrialRecord::suggest_s,
  // model_fit_s). Throws for an unknown trial.
  void set_trial_search_time(const std::string& trial_id, double suggest_s,
                             const std::optional<double>& model_fit_s);
  // (trial_id, iteration) unique: a result written again is ignored. Keeps
  // the trial's trial_last_result row (storage/schema.sql).
  void append_result(const ResultRecord& result);
  void add_checkpoint(const CheckpointRecord& checkpoint);  // insert or replace
  void add_exploit(const ExploitRecord& exploit);
  void add_placement(const PlacementRecord& placement);
  void remove_checkpoint(const std::string& trial_id, int64_t iteration);  // the row only
  // Deletes a trial's results after `iteration`: a PBT exploit that rewinds
  // the trial to an earlier donor checkpoint discards that branch (the
  // exploits table keeps the old config).
  void remove_results_after(const std::string& trial_id, int64_t iteration);
  void put_state(const std::string& key, const Json& value);  // insert or replace
  // A state saved in parts (core/state_parts.h): the head replaces the
  // value, each chunk is stored (replaced) under a key of its own, and
  // state(key) gives the whole assembled.
  void put_state_parts(const std::string& key, const StateParts& parts);
  void flush();   // commits the open batch, then checkpoint_if_due()
  void commit();  // commits the open batch, checkpointing nothing
  // Copies the write-ahead log into the database file when the last commit
  // left it over the auto-checkpoint size (SQLite's passive checkpoint:
  // readers are not waited for). Throws StorageError when the copy fails.
  void checkpoint_if_due();

  // --- reads (see the committed state plus this writer's open batch) ---
  std::optional<ExperimentRecord> experiment() const;
  std::vector<TrialRecord> trials() const;
  std::vector<ResultRecord> results(const std::string& trial_id) const;
  int64_t num_results() const;
  // The latest time a trial's row or a result stored (a trial created,
  // started or finished; a result's timestamp); nullopt: none yet.
  std::optional<double> latest_time() const;
  std::vector<CheckpointRecord> checkpoints(const std::string& trial_id) const;  // by iteration
  std::vector<ExploitRecord> exploits() const;                                   // oldest first
  std::vector<PlacementRecord> placements() const;                               // oldest first
  std::optional<Json> state(const std::string& key) const;

  // The best trial by its last result's value of the experiment metric under
  // the experiment mode (the best_trial view). nullopt when no trial has a
  // finite value for the metric.
  struct Best {
    TrialRecord trial;
    double value = 0;
    Json last_metrics;
  };
  std::optional<Best> best_trial() const;

  // The pareto_front view (storage/schema.sql): feasible trials with every
  // objective, best rank first; with front_only, rank 0 alone. Empty for a
  // file older than the view.
  struct FrontMember {
    TrialRecord trial;
    int64_t rank = 0;
    double crowding = 0;  // infinity at the ends of an objective
    Json values;          // {metric: value} of the last result
    Json last_metrics;
  };
  std::vector<FrontMember> pareto_front(bool front_only = false) const;

 private:
  struct Statements;  // the hot writes, prepared once (experiment_store.cpp)

  ExperimentStore(std::filesystem::path path, sqlite3* db);
  void begin_batch();
  void close() noexcept;  // commits an open batch, finalizes, closes
  // What reads select for `column`'s side column, and the trials columns:
  // NULL in a version 1 file opened read-only.
  std::string side_column(std::string_view column) const;
  std::string trial_columns() const;

  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  bool in_batch_ = false;
  bool nonfinite_columns_ = false;          // the file has the *_nonfinite columns
  bool objectives_table_ = false;           // the objectives table and pareto_front
  bool search_time_columns_ = false;        // trials' suggest_s and model_fit_s
  std::unique_ptr<Statements> statements_;  // null until the first write
  // The write-ahead log's length in pages after the last commit (SQLite's
  // WAL hook writes it: its address stays put when the store moves); 0
  // after a checkpoint until the next commit. Null when opened read-only.
  std::unique_ptr<int> wal_pages_;
  // The experiment metric, as trial_last_result's metric_value reads it;
  // nullopt without an experiment row. Read with statements_.
  std::optional<std::string> metric_;
};

}  // namespace tune::storage
