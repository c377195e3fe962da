#include "tune/builtin_stoppers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace tune {
namespace {

double metric_value(const Json& result, const std::string& metric) {
  auto it = result.find(metric);
  if (it == result.end() || !it->is_number()) return std::numeric_limits<double>::quiet_NaN();
  return it->get<double>();
}

// Population standard deviation (np.std); NaN when any value is.
template <class Range>
double population_std(const Range& values) {
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double sq = 0;
  for (double v : values) sq += (v - mean) * (v - mean);
  return std::sqrt(sq / static_cast<double>(values.size()));
}

}  // namespace

MaximumIterationStopper::MaximumIterationStopper(int64_t max_iter) : max_iter_(max_iter) {}

bool MaximumIterationStopper::should_stop_trial(const std::string& trial_id, const Json&) {
  return ++iterations_[trial_id] >= max_iter_;
}

int64_t MaximumIterationStopper::continues_through(const std::string& trial_id,
                                                   int64_t iteration) const {
  auto it = iterations_.find(trial_id);
  const int64_t seen = it != iterations_.end() ? it->second : 0;
  return std::max(iteration, iteration + max_iter_ - seen - 1);
}

std::string MaximumIterationStopper::reason() const {
  return fmt::format("reached max_iter={} results", max_iter_);
}

TrialPlateauStopper::TrialPlateauStopper(TrialPlateauOptions options)
    : options_(std::move(options)) {
  if (options_.metric.empty())
    throw ConfigError::at_key("metric", "TrialPlateauStopper needs a metric");
  if (options_.num_results < 1) {
    throw ConfigError::at_key("num_results", "num_results must be at least 1");
  }
  if (options_.std < 0) throw ConfigError::at_key("std", "std must not be negative");
  if (options_.metric_threshold && !options_.mode) {
    throw ConfigError::at_key("mode", "metric_threshold needs a mode");
  }
}

bool TrialPlateauStopper::should_stop_trial(const std::string& trial_id, const Json& result) {
  const double value = metric_value(result, options_.metric);
  auto& window = windows_[trial_id];
  window.push_back(value);
  if (static_cast<int64_t>(window.size()) > options_.num_results) window.pop_front();
  if (++counts_[trial_id] < options_.grace_period) return false;
  if (static_cast<int64_t>(window.size()) < options_.num_results) return false;
  if (options_.metric_threshold) {
    const double t = *options_.metric_threshold;
    // A NaN never passes the threshold.
    if (!(*options_.mode == Mode::kMin ? value <= t : value >= t)) return false;
  }
  const double sd = population_std(window);
  if (!(sd < options_.std)) return false;
  reason_ = fmt::format("{} plateaued: std {:.3g} of the last {} results below {}", options_.metric,
                        sd, options_.num_results, options_.std);
  return true;
}

ExperimentPlateauStopper::ExperimentPlateauStopper(ExperimentPlateauOptions options)
    : options_(std::move(options)) {
  if (options_.metric.empty()) {
    throw ConfigError::at_key("metric", "ExperimentPlateauStopper needs a metric");
  }
  if (options_.top < 1) throw ConfigError::at_key("top", "top must be at least 1");
  if (options_.std < 0) throw ConfigError::at_key("std", "std must not be negative");
  if (options_.patience < 0) throw ConfigError::at_key("patience", "patience must not be negative");
}

bool ExperimentPlateauStopper::should_stop_trial(const std::string&, const Json& result) {
  const double value = metric_value(result, options_.metric);
  if (!std::isnan(value)) {
    // Sorted so that the best values are last; keep the `top` best.
    const double key = options_.mode == Mode::kMin ? -value : value;
    top_values_.insert(std::upper_bound(top_values_.begin(), top_values_.end(), key), key);
    if (static_cast<int64_t>(top_values_.size()) > options_.top) {
      top_values_.erase(top_values_.begin());
    }
  }
  iterations_ = has_plateaued() ? iterations_ + 1 : 0;
  return false;
}

bool ExperimentPlateauStopper::has_plateaued() const {
  return static_cast<int64_t>(top_values_.size()) == options_.top &&
         population_std(top_values_) <= options_.std;
}

bool ExperimentPlateauStopper::stop_all() {
  return has_plateaued() && iterations_ >= options_.patience;
}

std::string ExperimentPlateauStopper::reason() const {
  return fmt::format("the top {} values of {} plateaued (std <= {})", options_.top, options_.metric,
                     options_.std);
}

TimeoutStopper::TimeoutStopper(std::chrono::duration<double> timeout, NowFunction now)
    : timeout_(timeout), now_(std::move(now)), start_(now_()) {}

bool TimeoutStopper::stop_all() { return now_() - start_ >= timeout_; }

std::string TimeoutStopper::reason() const {
  return fmt::format("time budget of {} s reached", timeout_.count());
}

CombinedStopper::CombinedStopper(std::vector<std::shared_ptr<Stopper>> stoppers)
    : stoppers_(std::move(stoppers)) {}

bool CombinedStopper::should_stop_trial(const std::string& trial_id, const Json& result) {
  bool stop = false;
  for (auto& s : stoppers_) {
    if (s->should_stop_trial(trial_id, result) && !stop) {
      stop = true;
      reason_ = s->reason();
    }
  }
  return stop;
}

int64_t CombinedStopper::continues_through(const std::string& trial_id, int64_t iteration) const {
  int64_t through = std::numeric_limits<int64_t>::max();
  for (const auto& s : stoppers_)
    through = std::min(through, s->continues_through(trial_id, iteration));
  return through;
}

bool CombinedStopper::stop_all() {
  for (auto& s : stoppers_) {
    if (s->stop_all()) {
      reason_ = s->reason();
      return true;
    }
  }
  return false;
}

}  // namespace tune
