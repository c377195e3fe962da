// ResultGrid and Result: what Tuner::fit() returns, read from the
// experiment's database once the run ends (Ray Tune's ResultGrid/Result).
// A ResultGrid is a snapshot: plain values, no open files.
//
//   tune::ResultGrid grid = tuner.fit();
//   const tune::Result& best = grid.get_best_result();          // experiment metric/mode
//   const tune::Result& by_avg = grid.get_best_result("loss", tune::Mode::kMin, "last-5-avg");
//   for (const tune::Result& r : grid) fmt::print("{} {}\n", r.config.dump(), r.metrics.dump());
//   for (const tune::Result* r : grid.get_pareto_front()) ...  // several objectives
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/types.h"

namespace tune {

struct Result {
  std::string trial_id;
  TrialStatus status = TrialStatus::kPending;
  Json config = Json::object();
  // The last result: the user's metrics plus training_iteration,
  // time_this_iter_s, time_total_s, timestamp and trial_id. Empty object when
  // the trial reported nothing.
  Json metrics = Json::object();
  std::optional<std::filesystem::path> checkpoint;  // the latest kept checkpoint
  // Every kept checkpoint with the result of its iteration, oldest first.
  std::vector<std::pair<std::filesystem::path, Json>> best_checkpoints;
  std::filesystem::path path;        // the trial's directory
  std::optional<std::string> error;  // set when the trial ended in ERROR
  // Every result row in iteration order, each as `metrics` (Ray's
  // metrics_dataframe).
  std::vector<Json> history;

  const std::vector<Json>& results() const { return history; }
};

class ResultGrid {
 public:
  // `metric`/`mode` are the experiment's defaults for get_best_result (an
  // empty metric: none); `objectives` its objectives when several.
  ResultGrid(std::vector<Result> results, std::string metric, Mode mode,
             std::filesystem::path experiment_path, std::vector<Objective> objectives = {});

  // Reads the experiment in `experiment_dir` (its experiment.db), read-only;
  // safe while a controller runs. Throws StorageError when there is none.
  static ResultGrid from_experiment(const std::filesystem::path& experiment_dir);

  // The best trial's Result by `metric` under `mode` (defaults: the
  // experiment's), judging each trial by `scope` of its results:
  //   "last"        its last value (Ray's default)
  //   "avg"         the mean of all its values
  //   "last-5-avg", "last-10-avg"  the mean of its last 5 or 10 values
  //   "all"         its best value of all (max for kMax, min for kMin; NaN values skipped)
  // Trials in ERROR are skipped (as by the store's best_trial view), and so
  // are results without a numeric value for the metric, and trials whose
  // last result is infeasible (core::kConstraintsKey). With
  // filter_nan_and_inf, a trial whose score is NaN or infinite is ignored
  // (as in Ray). Throws ConfigError for an unknown scope, or when no metric
  // is given and the experiment has none; throws Error when no trial has a
  // usable score. With several objectives there is no one best: `metric`
  // names the one to judge by (its mode is the objective's unless given),
  // else ConfigError (key "metric") lists them; get_pareto_front() has the
  // trade-offs.
  const Result& get_best_result(const std::string& metric = "",
                                std::optional<Mode> mode = std::nullopt,
                                const std::string& scope = "last",
                                bool filter_nan_and_inf = true) const;

  // Several objectives: the trials on the Pareto front, as the store's
  // pareto_front view has them at rank 0: of the trials not in ERROR whose
  // last result is feasible (core::kConstraintsKey) and holds a finite number for every
  // objective, those no other beats in every objective. In trial order;
  // empty without several objectives.
  std::vector<const Result*> get_pareto_front() const;
  const std::vector<Objective>& objectives() const { return objectives_; }

  size_t size() const { return results_.size(); }
  const Result& operator[](size_t i) const { return results_.at(i); }
  std::vector<Result>::const_iterator begin() const { return results_.begin(); }
  std::vector<Result>::const_iterator end() const { return results_.end(); }

  std::vector<std::string> errors() const;  // the errors of the trials in ERROR
  int64_t num_errors() const;
  int64_t num_terminated() const;
  const std::filesystem::path& experiment_path() const { return experiment_path_; }

  // One row per trial: trial_id, status, config/<key> (nested keys dotted),
  // then every metric of its last result; "" where a trial lacks a column.
  // Throws Error when the file cannot be written.
  void to_csv(const std::filesystem::path& file) const;
  // [{trial_id, status, config, metrics, path, checkpoint, error}, ...]
  Json to_json() const;

 private:
  std::vector<Result> results_;
  std::string metric_;
  Mode mode_;
  std::vector<Objective> objectives_;
  std::filesystem::path experiment_path_;
};

}  // namespace tune
