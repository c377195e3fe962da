#include "search/internal/concurrency_limiter.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"

namespace tune::search {

ConcurrencyLimiter::ConcurrencyLimiter(std::unique_ptr<Searcher> inner, int64_t max_concurrent)
    : inner_(std::move(inner)), max_concurrent_(max_concurrent) {
  if (max_concurrent_ < 1) {
    throw ConfigError::at_key("max_concurrent",
                              fmt::format("must be at least 1, got {}", max_concurrent_));
  }
}

void ConcurrencyLimiter::set_search_properties(const std::string& metric, Mode mode,
                                               const ParamSpace& space) {
  inner_->set_search_properties(metric, mode, space);
}

void ConcurrencyLimiter::set_objectives(const std::vector<Objective>& objectives,
                                        const ParamSpace& space) {
  inner_->set_objectives(objectives, space);
}

Suggestion ConcurrencyLimiter::suggest(const std::string& trial_id) {
  if (static_cast<int64_t>(live_.size()) >= max_concurrent_) return Suggestion::not_ready();
  Suggestion s = inner_->suggest(trial_id);
  if (s.status == Suggestion::Status::kConfig) live_.insert(trial_id);
  return s;
}

void ConcurrencyLimiter::on_trial_result(const std::string& trial_id, const Json& result) {
  inner_->on_trial_result(trial_id, result);
}

void ConcurrencyLimiter::on_trial_complete(const std::string& trial_id, const Json* last_result,
                                           bool error) {
  live_.erase(trial_id);
  paused_.erase(trial_id);
  inner_->on_trial_complete(trial_id, last_result, error);
}

void ConcurrencyLimiter::on_trial_pause(const std::string& trial_id) {
  if (live_.erase(trial_id) > 0) paused_.insert(trial_id);
  inner_->on_trial_pause(trial_id);
}

void ConcurrencyLimiter::on_trial_unpause(const std::string& trial_id) {
  if (paused_.erase(trial_id) > 0) live_.insert(trial_id);
  inner_->on_trial_unpause(trial_id);
}

Json ConcurrencyLimiter::save() const {
  return {{"live", live_}, {"paused", paused_}, {"inner", inner_->save()}};
}

void ConcurrencyLimiter::restore(const Json& state) {
  try {
    auto live = state.at("live").get<std::set<std::string>>();
    // State saved before pauses were told apart has no "paused".
    auto paused = state.value("paused", std::set<std::string>{});
    inner_->restore(state.at("inner"));
    live_ = std::move(live);
    paused_ = std::move(paused);
  } catch (const Json::exception& e) {
    throw Error(std::string("malformed ConcurrencyLimiter state: ") + e.what());
  }
}

int ConcurrencyLimiter::max_pending_trials() const {
  return static_cast<int>(std::min<int64_t>(inner_->max_pending_trials(), max_concurrent_));
}

}  // namespace tune::search
