#include "search/internal/repeater.h"

#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include "core/errors.h"

namespace tune::search {

Repeater::Repeater(std::unique_ptr<Searcher> inner, int64_t repeat, bool set_index)
    : inner_(std::move(inner)), repeat_(repeat), set_index_(set_index) {
  if (repeat_ < 1)
    throw ConfigError::at_key("repeat", fmt::format("must be at least 1, got {}", repeat_));
}

void Repeater::set_search_properties(const std::string& metric, Mode mode,
                                     const ParamSpace& space) {
  metric_ = metric;
  inner_->set_search_properties(metric, mode, space);
}

Suggestion Repeater::suggest(const std::string& trial_id) {
  std::optional<double> model_fit_s;  // the group's first trial's only
  if (filling_.empty()) {
    Suggestion s = inner_->suggest(trial_id);
    if (s.status != Suggestion::Status::kConfig) return s;
    groups_[trial_id] = Group{std::move(s.config)};
    filling_ = trial_id;
    model_fit_s = s.model_fit_s;
  }
  Group& group = groups_.at(filling_);
  Json config = group.config;
  if (set_index_) config["__trial_index__"] = group.handed_out;
  group_of_[trial_id] = filling_;
  if (++group.handed_out == repeat_) filling_.clear();
  Suggestion out = Suggestion::of(std::move(config));
  out.model_fit_s = model_fit_s;
  return out;
}

void Repeater::on_trial_complete(const std::string& trial_id, const Json* last_result, bool error) {
  auto it = group_of_.find(trial_id);
  if (it == group_of_.end()) return;
  const std::string primary = it->second;
  group_of_.erase(it);
  Group& group = groups_.at(primary);
  ++group.completed;
  if (last_result && !error) {
    auto value = last_result->find(metric_);
    if (value != last_result->end() && value->is_number() && std::isfinite(value->get<double>())) {
      group.scores.push_back(value->get<double>());
    }
  }
  if (group.completed < repeat_) return;
  if (group.scores.empty()) {
    inner_->on_trial_complete(primary, nullptr, true);
  } else {
    const double mean = std::accumulate(group.scores.begin(), group.scores.end(), 0.0) /
                        static_cast<double>(group.scores.size());
    const Json result{{metric_, mean}};
    inner_->on_trial_complete(primary, &result, false);
  }
  groups_.erase(primary);
}

Json Repeater::save() const {
  Json groups = Json::object();
  for (const auto& [id, g] : groups_) {
    groups[id] = {{"config", g.config},
                  {"handed_out", g.handed_out},
                  {"completed", g.completed},
                  {"scores", g.scores}};
  }
  return {{"groups", std::move(groups)},
          {"group_of", group_of_},
          {"filling", filling_},
          {"inner", inner_->save()}};
}

void Repeater::restore(const Json& state) {
  try {
    std::map<std::string, Group> groups;
    for (const auto& [id, g] : state.at("groups").items()) {
      groups[id] =
          Group{g.at("config"), g.at("handed_out").get<int64_t>(), g.at("completed").get<int64_t>(),
                g.at("scores").get<std::vector<double>>()};
    }
    auto group_of = state.at("group_of").get<std::map<std::string, std::string>>();
    auto filling = state.at("filling").get<std::string>();
    inner_->restore(state.at("inner"));
    groups_ = std::move(groups);
    group_of_ = std::move(group_of);
    filling_ = std::move(filling);
  } catch (const Json::exception& e) {
    throw Error(std::string("malformed Repeater state: ") + e.what());
  }
}

int Repeater::max_pending_trials() const {
  return static_cast<int>(std::max<int64_t>(inner_->max_pending_trials(), repeat_));
}

}  // namespace tune::search
