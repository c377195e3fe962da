// The median stopping rule of Google Vizier (Golovin et al., KDD 2017), as
// Ray Tune's MedianStoppingRule: at time t >= grace_period, a trial stops
// when its best result so far is strictly worse than the median, over the
// other trials that have reached t, of their running means of the metric
// over [grace_period, t]. With fewer than min_samples_required such trials
// it continues, or yields (kPause) to waiting trials when min_time_slice has
// passed since its last yield.
//
// hard_stop = false pauses instead of stopping; such a trial is resumed once
// nothing else waits (choose_trial_to_run runs pending trials first) and
// then runs to its end, FIFO, as in Ray.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "schedulers/internal/decision_reasons.h"
#include "schedulers/internal/objective.h"
#include "schedulers/internal/trial_states.h"
#include "schedulers/scheduler_options.h"
#include "schedulers/trial_scheduler.h"

namespace tune::schedulers {

class MedianStoppingRule final : public TrialScheduler {
 public:
  // Throws ConfigError: grace_period >= 0, min_samples_required >= 1, min_time_slice >= 0.
  explicit MedianStoppingRule(MedianStoppingOptions options);

  void set_search_properties(const std::string& metric, Mode mode) override;
  void on_trial_add(const TrialView& trial) override;
  Decision on_trial_result(const TrialView& trial, const Json& result) override;
  void on_trial_complete(const TrialView& trial, const Json* last_result) override;
  void on_trial_error(const TrialView& trial) override;
  void on_trial_remove(const TrialView& trial) override;
  int choose_trial_to_run(const std::vector<TrialView>& candidates) override;
  bool pauses_trials() const override { return !options_.hard_stop; }
  std::string decision_reason(const std::string& trial_id) const override;
  Json save() const override;
  void restore(const Json& state) override;
  std::string debug_string() const override;
  std::string kind() const override { return "median_stopping_rule"; }

 private:
  struct Point {
    double time;
    double value;  // the metric as reported (no sign)
  };

  double running_mean(const std::vector<Point>& results, double time) const;
  double best(const std::vector<Point>& results) const;

  MedianStoppingOptions options_;
  detail::Objective objective_;
  std::map<std::string, std::vector<Point>> results_;  // kept after a trial ends
  std::set<std::string> stopped_;
  std::map<std::string, double> last_pause_;
  detail::TrialStates states_;
  detail::DecisionReasons reasons_;
};

}  // namespace tune::schedulers
