// ExperimentDb: one experiment.db opened read-only for the dashboard, with
// the queries its pages need, each answering JSON ready to send.
//
// Read-only (SQLITE_OPEN_READONLY) and WAL: a reader never blocks the
// controller that writes the file, and waits up to a busy timeout when a
// checkpoint holds it. Open one per request: a connection is cheap and this
// keeps the server's threads independent. Not thread-safe.
//
// Errors throw StorageError naming the file and SQLite's message (missing,
// corrupt or locked database, or one newer than this build understands).
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/types.h"
#include "schedulers/scheduler_state.h"

namespace tune::dashboard {

// Limits that keep a page light however large the experiment: the browser
// never receives every result of a 10,000-trial sweep at once.
struct QueryLimits {
  size_t max_curve_trials = 200;    // curves: the best trials by their last value, the rest counted
  size_t max_curve_points = 200;    // points per curve: evenly thinned, the last one always kept
  size_t max_trial_results = 2000;  // one trial's result table, thinned the same way
  size_t log_tail_bytes = 16384;    // the end of each rank_N.log on the trial page
  int64_t max_page_trials = 10000;  // trials?offset=: rows one page holds at most (and by default)
  size_t max_chart_trials = 2000;   // the trials the page's charts draw (a sample past this)
};

// How a page of the trial table is cut (trials?offset=&sort=&desc=&filter=).
struct TrialOrder {
  // index, trial_id, status, iteration, reason, metric.NAME or config.KEY
  std::string sort = "index";
  bool descending = false;
  std::string filter;  // only rows whose id, status, reason, error or config hold this text
                       // (any case); empty: every row
};

// One trial's config and last result, as the importance and slice views need them.
struct TrialPoint {
  std::string trial_id;
  std::string status;
  Json config;        // flattened: nested keys joined with '.'
  Json last_metrics;  // the last result's metrics; null before the first result
};

class ExperimentDb {
 public:
  // Opens <dir>/experiment.db read-only. Throws StorageError when it is
  // missing, unreadable, not a tunerun database or newer than this build.
  static ExperimentDb open(const std::filesystem::path& dir);

  ExperimentDb(ExperimentDb&& other) noexcept;
  ExperimentDb& operator=(ExperimentDb&&) = delete;
  ~ExperimentDb();

  // Changes whenever a result, a status change, an exploit or the experiment
  // row is written: a few indexed lookups, cheap enough to poll every second.
  std::string fingerprint() const;

  // The experiment row (spec parsed), trial counts by status, the number of
  // results and when the latest was written, the best trial and its config,
  // the reported metric names and the parameters (flattened names, with
  // `log` set for log domains; the names and parameters as the first and
  // last 1,000 trials show them).
  Json summary() const;

  // summary()'s "params" alone, without reading a result: what the
  // importance page needs.
  Json params() const;

  // One row per trial in creation order: id, index, status, reason (enriched
  // with the scheduler's rung or the PBT donor), flattened config, last
  // iteration and metrics, times, error, and for a trial that paused
  // "pauses": [[paused at, resumed at (null: still paused)], ...].
  Json trials() const;
  // The rows of trials() from `offset` (0: the first), at most `limit`, in
  // `order` (ties and trials without the sort key's value last, by creation
  // order): {"total": trials in all (those matching the filter), "offset",
  // "limit", "trials": [...]}. Consecutive pages hold each trial once.
  Json trial_page(int64_t offset, int64_t limit, const TrialOrder& order = {}) const;

  // The trials the page's charts draw: every trial when there are at most
  // `max`, else every stride-th by creation order (stride = ceil(total /
  // max)), and wherever it is the best trial of each objective (as summary()
  // names it): {"total", "stride", "fingerprint", "full": true, "trials":
  // [rows as trials()]}. Rows and fingerprint are read in one transaction.
  Json trial_sample(size_t max) const;
  // What changed in trial_sample() since the answer that carried fingerprint
  // `since` and `stride`: the rows of the sampled trials (and the bests)
  // with a result or a status change newer than it, and the waiting ones
  // (PENDING, PAUSED: their reasons change without an event) ("full": false); the
  // whole sample ("full": true) when the stride is another now, an exploit
  // rewrote results since, or `since` is no fingerprint of this file.
  Json trial_sample_since(size_t max, const std::string& since, int64_t stride) const;

  // Learning curves of `metric`: per trial its iterations, training times
  // and values, thinned to limits. When there are more than
  // max_curve_trials, those shown are the best by their last value under
  // `mode` ("min"/"max"; an objective's own mode whatever `mode` says, "min"
  // when empty for another metric), failed trials and trials without a
  // finite value last; `total` says how many exist, `mode` which way ranked.
  Json curves(const std::string& metric, const QueryLimits& limits,
              const std::string& mode = "") const;

  // One trial: its row, results (thinned), status events, checkpoints,
  // exploits it took part in, and the tail of each rank's log.
  // Throws NotFound when the experiment has no such trial.
  Json trial(const std::string& trial_id, const QueryLimits& limits) const;

  // The scheduler made visible: ASHA rungs with their cut-offs, HyperBand
  // brackets, and every PBT exploit (the lineage graph's edges).
  Json scheduler() const;

  // With several objectives: {objectives: [{metric, mode}], points: [{trial_id,
  // index, values (one per objective, in order), feasible, rank (0: the
  // Pareto front; null when infeasible), crowding}]}, one point per trial
  // whose last result has every objective. With one objective, no points.
  Json front() const;

  // The highest training_iteration at which at least `min_trials` trials
  // reported a finite `metric` (values compared at one budget); 0 when no
  // iteration has that many.
  int64_t one_budget(const std::string& metric, size_t min_trials) const;
  // The trials that reported a finite `metric` at `iteration`, by creation
  // order; failed trials left out (where they broke is no value of theirs).
  std::vector<std::string> trials_with_value_at(int64_t iteration, const std::string& metric) const;
  // Those of `trial_ids` that reported at `iteration`, in the order given,
  // each with its metrics there (in last_metrics).
  std::vector<TrialPoint> points_at(int64_t iteration,
                                    const std::vector<std::string>& trial_ids) const;
  // one_budget() and every trial that reported there, finite or not, with
  // its metrics there, by creation order. Iteration 0 and no points when no
  // iteration has enough.
  std::pair<int64_t, std::vector<TrialPoint>> points_at_one_budget(const std::string& metric,
                                                                   size_t min_trials) const;

  // The experiment's metric and mode ("min"/"max"); metric empty when none.
  std::pair<std::string, std::string> objective() const;
  // Every objective (metric, mode) in the sweep's order: the objectives
  // table, or the experiment's metric alone; empty without a metric.
  std::vector<std::pair<std::string, std::string>> objectives() const;

  sqlite3* handle() const { return db_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  ExperimentDb(std::filesystem::path path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  // Where a trial's files are now (see curves.cpp); empty when unknown.
  std::filesystem::path trial_dir(const std::string& trial_id, const std::string& stored) const;
  // The flattened config and last metrics (with `metrics`; else null) of
  // the first `half` and the last `half` trials by creation order.
  std::vector<TrialPoint> first_and_last_points(int64_t half, bool metrics) const;
  // The trial whose last result has the best finite `metric` under `mode`
  // ("min"/"max"), not failed and feasible, with that value; nullopt when
  // none has one.
  std::optional<std::pair<double, TrialPoint>> best_trial(const std::string& metric,
                                                          const std::string& mode) const;
  // trials()' rows from `offset`, at most `limit` (-1: all).
  Json trial_rows(int64_t offset, int64_t limit) const;
  // trials()' rows of the trials whose rowids `selection` yields as
  // `page_id`, in that order, its parameters ?1, ?2... bound from `args`
  // (integers or strings).
  Json trial_rows_of(const std::string& selection, const std::vector<Json>& args) const;
  // The ids of the best trial of each objective that has one (best_trial()).
  std::vector<std::string> objective_bests() const;
  // SQL for the last training_iteration of the trial `t` of the query around it.
  std::string last_result_iteration() const;

  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  // The file keeps each trial's last result in trial_last_result (schema 4;
  // storage/schema.sql): the best trial and the curves' ranking read it
  // rather than every trial's last result.
  bool kept_last_ = false;
};

// A page or trial that does not exist (HTTP 404), unlike a broken database.
class NotFound : public Error {
 public:
  using Error::Error;
};

// The sweep as the user wrote it (TOML as JSON: param_space, scheduler...)
// from the experiment row's spec, which the controller stores as
// {"sweep": ..., "sweep_text": ..., "sweep_file": ...}.
Json sweep_of(const Json& spec);

// The searcher as the sweep names it ("tpe", "nsga2"...; "random" when it
// names none, Tune's default); for a searcher object given to a Tuner, its
// kind() as the spec stores it ("custom": a class of the user's own).
std::string search_algorithm(const Json& sweep);

// The scheduler as a reader knows it: scheduler_type(), with HyperBand's
// variants told apart ("async_hyperband", "hyperband_for_bohb") and "median"
// as "median_stopping_rule".
std::string scheduler_name(const Json& sweep, const std::string& type);

// The scheduler's type ("asha", "pbt"...): the sweep's, else recognised from
// the state it saved (a sweep built in C++ may not name it); "fifo" if neither.
std::string scheduler_type(const Json& sweep, const Json& saved_state);

// The sweep's [scheduler] table, its type included; {} when it has none.
Json scheduler_table(const Json& sweep);

// The scheduler's saved state as schedulers/scheduler_state.h decodes it,
// for scheduler_type's scheduler with the sweep's options; `mode` is the
// experiment's. Throws as schedulers::decode_scheduler_state does.
schedulers::SchedulerState scheduler_state(const Json& sweep, const Json& saved_state, Mode mode);

// The JSON path of a metric for json_extract: quoted, so names may hold dots.
std::string metric_path(const std::string& metric);

// Nested objects become dotted keys: {"opt": {"lr": 1}} -> {"opt.lr": 1}.
Json flatten(const Json& config);

// Evenly chosen indices of `n` items, at most `max`, always keeping the last.
std::vector<size_t> thin(size_t n, size_t max);

}  // namespace tune::dashboard
