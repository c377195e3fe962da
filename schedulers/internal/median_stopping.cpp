#include "schedulers/internal/median_stopping.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "schedulers/internal/stats.h"

namespace tune::schedulers {

using detail::double_from_json;
using detail::number_at;
using detail::to_json;

MedianStoppingRule::MedianStoppingRule(MedianStoppingOptions options)
    : options_(std::move(options)), objective_(options_.metric, options_.mode) {
  auto check = [](bool ok, const char* key, const std::string& message) {
    if (!ok) throw ConfigError::at_key(key, "median stopping rule: " + message);
  };
  check(options_.grace_period >= 0, "grace_period", "grace_period must be >= 0");
  check(options_.min_samples_required >= 1, "min_samples_required",
        "min_samples_required must be >= 1");
  check(options_.min_time_slice >= 0, "min_time_slice", "min_time_slice must be >= 0");
  check(!options_.time_attr.empty(), "time_attr", "time_attr must not be empty");
}

void MedianStoppingRule::set_search_properties(const std::string& metric, Mode mode) {
  objective_.set_defaults("median_stopping_rule", metric, mode);
}

void MedianStoppingRule::on_trial_add(const TrialView& trial) {
  states_.set(trial.trial_id, TrialStatus::kPending);
}

double MedianStoppingRule::running_mean(const std::vector<Point>& results, double time) const {
  std::vector<double> scoped;
  for (const Point& p : results) {
    if (options_.grace_period <= p.time && p.time <= time) scoped.push_back(p.value);
  }
  return detail::mean(scoped);
}

double MedianStoppingRule::best(const std::vector<Point>& results) const {
  // Python's max()/min() over the values: the first of equals, NaN-blind.
  double best = results.front().value;
  for (const Point& p : results) {
    if (objective_.sign() * p.value > objective_.sign() * best) best = p.value;
  }
  return best;
}

Decision MedianStoppingRule::on_trial_result(const TrialView& trial, const Json& result) {
  const std::string& id = trial.trial_id;
  states_.set(id, TrialStatus::kRunning);
  const auto time = number_at(result, options_.time_attr);
  const auto value = number_at(result, objective_.metric());
  if (!time || !value) return Decision::kContinue;
  if (stopped_.contains(id)) return Decision::kContinue;  // paused once, now FIFO (soft stop)

  results_[id].push_back({*time, *value});
  if (*time < options_.grace_period) return Decision::kContinue;

  std::vector<const std::vector<Point>*> others;
  for (const auto& [other, points] : results_) {
    if (other != id && !points.empty() && points.back().time >= *time) others.push_back(&points);
  }
  if (static_cast<int64_t>(others.size()) < options_.min_samples_required) {
    // Yield to waiting trials when this one has had its time slice.
    auto last = last_pause_.find(id);
    const double since =
        *time -
        (last == last_pause_.end() ? -std::numeric_limits<double>::infinity() : last->second);
    if (since > options_.min_time_slice && states_.others_waiting(id)) {
      last_pause_[id] = *time;
      states_.set(id, TrialStatus::kPaused);
      return Decision::kPause;
    }
    return Decision::kContinue;
  }

  std::vector<double> means;
  for (const auto* points : others) means.push_back(running_mean(*points, *time));
  const double median = detail::median(means);
  const double best_value = best(results_[id]);
  // Ray: compare_op(median, best) != best, i.e. the median is strictly better.
  if (objective_.sign() * median > objective_.sign() * best_value) {
    stopped_.insert(id);
    reasons_.set(id, fmt::format("MedianStoppingRule at {} {:g}: best {} {:.6g} is worse than the "
                                 "median {:.6g} of the running means of {}",
                                 options_.time_attr, *time, objective_.metric(), best_value, median,
                                 detail::count_of(means.size(), "other trial")));
    if (options_.hard_stop) {
      states_.forget(id);
      return Decision::kStop;
    }
    states_.set(id, TrialStatus::kPaused);
    return Decision::kPause;
  }
  return Decision::kContinue;
}

void MedianStoppingRule::on_trial_complete(const TrialView& trial, const Json* last_result) {
  // Ray appends the final result again; the last point is what counts for
  // "has reached t", so only a newer one is added.
  if (last_result != nullptr) {
    const auto time = number_at(*last_result, options_.time_attr);
    const auto value = number_at(*last_result, objective_.metric());
    auto& points = results_[trial.trial_id];
    if (time && value && (points.empty() || points.back().time != *time)) {
      points.push_back({*time, *value});
    }
    if (points.empty()) results_.erase(trial.trial_id);
  }
  states_.forget(trial.trial_id);
}

void MedianStoppingRule::on_trial_error(const TrialView& trial) { on_trial_remove(trial); }
void MedianStoppingRule::on_trial_remove(const TrialView& trial) {
  states_.forget(trial.trial_id);
  reasons_.forget(trial.trial_id);
}

std::string MedianStoppingRule::decision_reason(const std::string& trial_id) const {
  return reasons_.get(trial_id);
}

int MedianStoppingRule::choose_trial_to_run(const std::vector<TrialView>& candidates) {
  // Ray's FIFOScheduler: pending trials first, then paused ones.
  int chosen = -1;
  for (size_t i = 0; i < candidates.size() && chosen < 0; ++i) {
    if (candidates[i].status == TrialStatus::kPending) chosen = static_cast<int>(i);
  }
  if (chosen < 0 && !candidates.empty()) chosen = 0;
  if (chosen >= 0) states_.set(candidates[chosen].trial_id, TrialStatus::kRunning);
  return chosen;
}

Json MedianStoppingRule::save() const {
  Json results = Json::object();
  for (const auto& [id, points] : results_) {
    Json list = Json::array();
    for (const Point& p : points) list.push_back({to_json(p.time), to_json(p.value)});
    results[id] = list;
  }
  return {{"results", results},
          {"stopped", stopped_},
          {"last_pause", last_pause_},
          {"states", states_.save()}};
}

void MedianStoppingRule::restore(const Json& state) {
  results_.clear();
  for (const auto& [id, list] : state.at("results").items()) {
    for (const Json& p : list) {
      results_[id].push_back({double_from_json(p.at(0)), double_from_json(p.at(1))});
    }
  }
  stopped_ = state.at("stopped").get<std::set<std::string>>();
  last_pause_ = state.at("last_pause").get<std::map<std::string, double>>();
  states_.restore(state.at("states"));
}

std::string MedianStoppingRule::debug_string() const {
  return fmt::format("MedianStoppingRule: num_stopped={}, trials with results={}", stopped_.size(),
                     results_.size());
}

}  // namespace tune::schedulers
