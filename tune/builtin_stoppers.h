// Stoppers like Ray Tune's (ray.tune.stopper), for RunConfig::stop or
// ExperimentSpec::stoppers. The controller asks every stopper about every
// complete iteration (should_stop_trial), whatever the scheduler decided,
// and asks stop_all() after each result and on each turn of its loop.
//
// When stop_all() is true the experiment ends normally (FINISHED, not
// resumable): no trial is created or started any more, waiting trials end
// TERMINATED at once and running ones are stopped (TERMINATED) at their next
// report.
//
// Not thread-safe; the controller's loop owns them.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/types.h"
#include "tune/stopper.h"
#include "tune/system/clock.h"

namespace tune {

// Stops each trial after `max_iter` results (Ray's MaximumIterationStopper
// counts results it has seen, not training_iteration).
class MaximumIterationStopper final : public Stopper {
 public:
  explicit MaximumIterationStopper(int64_t max_iter);
  bool should_stop_trial(const std::string& trial_id, const Json& result) override;
  std::string reason() const override;
  int64_t continues_through(const std::string& trial_id, int64_t iteration) const override;

 private:
  int64_t max_iter_;
  std::map<std::string, int64_t> iterations_;
};

struct TrialPlateauOptions {
  std::string metric;                      // required
  double std = 0.01;                       // Ray: 0.01; stop once the window's std is below this
  int64_t num_results = 4;                 // Ray: 4; window of the last results
  int64_t grace_period = 4;                // Ray: 4; results before any stop
  std::optional<double> metric_threshold;  // Ray: None; only stop once the metric is
                                           // at least this good under `mode`
  std::optional<Mode> mode;                // Ray: None; required with metric_threshold
};

// Stops a trial whose metric has plateaued: after grace_period results,
// once its last num_results values have a population std below `std` (and,
// with metric_threshold, its latest value is at least that good). A result
// lacking the metric counts as NaN, which keeps that window from plateauing.
class TrialPlateauStopper final : public Stopper {
 public:
  // Throws ConfigError for an empty metric, num_results < 1, std < 0, or a
  // metric_threshold without a mode.
  explicit TrialPlateauStopper(TrialPlateauOptions options);
  bool should_stop_trial(const std::string& trial_id, const Json& result) override;
  std::string reason() const override { return reason_; }

 private:
  TrialPlateauOptions options_;
  std::map<std::string, std::deque<double>> windows_;
  std::map<std::string, int64_t> counts_;
  std::string reason_;
};

struct ExperimentPlateauOptions {
  std::string metric;      // required
  double std = 0.001;      // Ray: 0.001
  int64_t top = 10;        // Ray: 10; how many best values form the window
  Mode mode = Mode::kMin;  // Ray: "min"
  int64_t patience = 0;    // Ray: 0; plateaued results to wait before stopping
};

// Ends the experiment once the `top` best values reported by any trial have
// a population std of at most `std`, for more than `patience` consecutive
// results. Never stops a single trial.
class ExperimentPlateauStopper final : public Stopper {
 public:
  // Throws ConfigError for an empty metric, top < 1, std < 0 or patience < 0.
  explicit ExperimentPlateauStopper(ExperimentPlateauOptions options);
  bool should_stop_trial(const std::string& trial_id, const Json& result) override;
  bool stop_all() override;
  std::string reason() const override;
  int64_t continues_through(const std::string&, int64_t) const override {
    return std::numeric_limits<int64_t>::max();
  }

 private:
  bool has_plateaued() const;

  ExperimentPlateauOptions options_;
  std::vector<double> top_values_;  // sorted, best last
  int64_t iterations_ = 0;
};

// Ends the experiment `timeout` after construction (Ray's TimeoutStopper;
// TuneConfig::time_budget_s), as `now` tells the time (a test drives its
// own clock). Running trials stop at their next report.
class TimeoutStopper final : public Stopper {
 public:
  explicit TimeoutStopper(std::chrono::duration<double> timeout, NowFunction now = clock_now);
  bool should_stop_trial(const std::string&, const Json&) override { return false; }
  bool stop_all() override;
  std::string reason() const override;
  int64_t continues_through(const std::string&, int64_t) const override {
    return std::numeric_limits<int64_t>::max();
  }

 private:
  std::chrono::duration<double> timeout_;
  NowFunction now_;
  Clock::time_point start_;
};

// Any of several stoppers: a trial stops when any says so, the experiment
// when any says stop_all. Unlike Ray's (whose any() short-circuits), every
// stopper sees every result, so stateful ones stay consistent.
class CombinedStopper final : public Stopper {
 public:
  explicit CombinedStopper(std::vector<std::shared_ptr<Stopper>> stoppers);
  bool should_stop_trial(const std::string& trial_id, const Json& result) override;
  bool stop_all() override;
  std::string reason() const override { return reason_; }
  int64_t continues_through(const std::string& trial_id, int64_t iteration) const override;

 private:
  std::vector<std::shared_ptr<Stopper>> stoppers_;
  std::string reason_;
};

using StopPredicate = std::function<bool(const std::string& trial_id, const Json& result)>;

// A trial stops when `predicate` returns true (Ray's FunctionStopper).
class FunctionStopper final : public Stopper {
 public:
  explicit FunctionStopper(StopPredicate predicate) : predicate_(std::move(predicate)) {}
  bool should_stop_trial(const std::string& trial_id, const Json& result) override {
    return predicate_(trial_id, result);
  }
  std::string reason() const override { return "stopped by the stop function"; }

 private:
  StopPredicate predicate_;
};

}  // namespace tune
