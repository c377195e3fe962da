#include "search/internal/model_based.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/errors.h"

namespace tune::search {

ModelBasedSearcher::ModelBasedSearcher(std::string name, ModelBasedOptions options)
    : name_(std::move(name)), options_(std::move(options)) {
  if (options_.num_samples < 1 && options_.num_samples != -1) {
    throw ConfigError::at_key(
        "num_samples",
        fmt::format("must be at least 1, or -1 for unlimited, got {}", options_.num_samples));
  }
  if (options_.n_startup_trials < 1) {
    throw ConfigError::at_key("n_startup_trials",
                              fmt::format("must be at least 1, got {}", options_.n_startup_trials));
  }
  for (const Json& point : options_.points_to_evaluate) {
    if (!point.is_object()) {
      throw ConfigError::at_key("points_to_evaluate",
                                "each point must be a table, got " + point.dump());
    }
  }
}

void ModelBasedSearcher::set_search_properties(const std::string& metric, Mode mode,
                                               const ParamSpace& space) {
  if (metric.empty()) {
    throw ConfigError::at_key(
        "metric",
        fmt::format("searcher '{}' learns from a metric; set the experiment's metric", name_));
  }
  metric_ = metric;
  mode_ = mode;
  encoding_ = detail::SpaceEncoding(space);
  // Every point must encode: a choice value outside its choices is an error now, not later.
  Rng rng = detail::suggestion_rng(options_.seed, 0);
  for (const Json& point : options_.points_to_evaluate) {
    Json config = encoding_.sample(rng);
    detail::deep_merge(config, point);
    try {
      encoding_.encode(config);
    } catch (const ConfigError& e) {
      throw ConfigError::at_key("points_to_evaluate", fmt::format("{}: {}", e.key(), e.message()));
    }
  }
}

Suggestion ModelBasedSearcher::suggest(const std::string& trial_id) {
  if (options_.num_samples != -1 && suggested_ >= static_cast<uint64_t>(options_.num_samples)) {
    return Suggestion::finished();
  }
  const uint64_t index = suggested_++;
  Rng rng = detail::suggestion_rng(options_.seed, index);
  Json config;
  if (index < options_.points_to_evaluate.size()) {
    config = encoding_.sample(rng);
    detail::deep_merge(config, options_.points_to_evaluate[index]);
  } else if (!ready_for_model() || encoding_.size() == 0) {
    config = encoding_.sample(rng);
  } else {
    config = encoding_.decode(propose(rng));
  }
  running_[trial_id] = Running{index, encoding_.encode(config), std::nullopt};
  return Suggestion::of(std::move(config));
}

bool ModelBasedSearcher::ready_for_model() const {
  return observations_.size() >= static_cast<size_t>(options_.n_startup_trials);
}

std::optional<double> ModelBasedSearcher::loss_of(const Json& result) const {
  auto it = result.find(metric_);
  if (it == result.end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  if (!std::isfinite(value)) return std::nullopt;
  return mode_ == Mode::kMax ? -value : value;
}

void ModelBasedSearcher::on_trial_result(const std::string& trial_id, const Json& result) {
  auto it = running_.find(trial_id);
  if (it == running_.end()) return;
  if (auto loss = loss_of(result)) {
    it->second.last_loss = loss;
    on_intermediate(it->second.index, it->second.x, *loss, result);
  }
}

void ModelBasedSearcher::on_trial_complete(const std::string& trial_id, const Json* last_result,
                                           bool error) {
  auto it = running_.find(trial_id);
  if (it == running_.end()) return;
  Running trial = std::move(it->second);
  running_.erase(it);
  if (error) return;
  std::optional<double> loss = last_result ? loss_of(*last_result) : std::nullopt;
  if (loss) on_intermediate(trial.index, trial.x, *loss, *last_result);
  on_trial_end(trial.index);
  if (!loss) loss = trial.last_loss;
  if (loss) observations_.push_back({trial.index, std::move(trial.x), *loss});
}

std::vector<ModelBasedSearcher::Observation> ModelBasedSearcher::running() const {
  std::vector<Observation> out;
  for (const auto& [id, trial] : running_) out.push_back({trial.index, trial.x, 0.0});
  std::sort(out.begin(), out.end(),
            [](const Observation& a, const Observation& b) { return a.index < b.index; });
  return out;
}

Json ModelBasedSearcher::save() const {
  Json observations = Json::array();
  for (const Observation& o : observations_) {
    observations.push_back({{"index", o.index}, {"x", o.x}, {"loss", o.loss}});
  }
  Json running = Json::object();
  for (const auto& [id, trial] : running_) {
    running[id] = {{"index", trial.index},
                   {"x", trial.x},
                   {"last_loss", trial.last_loss ? Json(*trial.last_loss) : Json()}};
  }
  return {{"searcher", name_},
          {"suggested", suggested_},
          {"observations", std::move(observations)},
          {"running", std::move(running)},
          {"model", save_model()}};
}

void ModelBasedSearcher::restore(const Json& state) {
  try {
    if (state.at("searcher").get<std::string>() != name_) {
      throw Error("the state belongs to searcher '" + state.at("searcher").get<std::string>() +
                  "'");
    }
    const size_t dims = encoding_.size();
    auto point = [dims](const Json& x) {
      auto out = x.get<std::vector<double>>();
      if (out.size() != dims) throw Error("a point has the wrong number of dimensions");
      return out;
    };
    std::vector<Observation> observations;
    for (const Json& o : state.at("observations")) {
      observations.push_back(
          {o.at("index").get<uint64_t>(), point(o.at("x")), o.at("loss").get<double>()});
    }
    std::map<std::string, Running> running;
    for (const auto& [id, r] : state.at("running").items()) {
      const Json& last = r.at("last_loss");
      running[id] = {r.at("index").get<uint64_t>(), point(r.at("x")),
                     last.is_null() ? std::nullopt : std::optional<double>(last.get<double>())};
    }
    restore_model(state.at("model"));
    suggested_ = state.at("suggested").get<uint64_t>();
    observations_ = std::move(observations);
    running_ = std::move(running);
  } catch (const Json::exception& e) {
    throw Error(fmt::format("malformed {} searcher state: {}", name_, e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("malformed {} searcher state: {}", name_, e.what()));
  }
}

}  // namespace tune::search
