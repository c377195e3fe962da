#include "search/internal/model_based.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/errors.h"
#include "core/pareto.h"

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
  objectives_ = {{metric, mode}};
  start(space);
}

void ModelBasedSearcher::set_objectives(const std::vector<Objective>& objectives,
                                        const ParamSpace& space) {
  if (!handles_several_objectives()) Searcher::set_objectives(objectives, space);
  if (objectives.empty()) {
    throw ConfigError::at_key(
        "metric",
        fmt::format("searcher '{}' learns from metrics; set the experiment's metric", name_));
  }
  objectives_ = objectives;
  start(space);
}

void ModelBasedSearcher::start(const ParamSpace& space) {
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

bool ModelBasedSearcher::inside_space(const Json& config, const std::vector<double>& x) const {
  // encode() clamps into the bounds and decode() snaps onto the lattice: a
  // value they move lies outside the domain.
  const Json decoded = encoding_.decode(x);
  for (const detail::Dimension& dim : encoding_.dims()) {
    if (dim.categorical()) continue;
    const Json* given = &config;
    const Json* back = &decoded;
    for (const std::string& key : dim.keys) {
      given = &given->at(key);
      back = &back->at(key);
    }
    const double v = given->get<double>(), w = back->get<double>();
    if (std::abs(v - w) > 1e-9 * std::max(1.0, std::abs(v))) return false;
  }
  return true;
}

size_t ModelBasedSearcher::warm_start(const std::vector<PriorTrial>& trials) {
  std::vector<Observation> prior;
  std::vector<const Json*> configs;
  for (const PriorTrial& t : trials) {
    std::optional<Outcome> outcome = outcome_of(t.result);
    if (!outcome) continue;
    std::vector<double> x;
    try {
      x = encoding_.encode(t.config);
    } catch (const ConfigError&) {
      continue;  // a value missing, or not among a choice's
    }
    if (!inside_space(t.config, x)) continue;
    const double loss = outcome->losses[0];
    prior.push_back({0, std::move(x), loss, std::move(outcome->losses), outcome->violation, true,
                     std::move(outcome->constraints)});
    configs.push_back(&t.config);
  }
  std::vector<std::vector<double>> losses;
  std::vector<double> violations;
  for (const Observation& o : prior) {
    losses.push_back(o.losses);
    violations.push_back(o.violation);
  }
  std::vector<Json> again;
  for (size_t i : core::elite_order(losses, violations)) {
    if (again.size() == kWarmStartRepeats) break;
    again.push_back(*configs[i]);
  }
  auto& points = options_.points_to_evaluate;
  points.insert(points.begin(), again.begin(), again.end());
  observations_.insert(observations_.begin(), prior.begin(), prior.end());
  return prior.size();
}

Suggestion ModelBasedSearcher::suggest(const std::string& trial_id) {
  if (options_.num_samples != -1 && suggested_ >= static_cast<uint64_t>(options_.num_samples)) {
    return Suggestion::finished();
  }
  const uint64_t index = suggested_++;
  Rng rng = detail::suggestion_rng(options_.seed, index);
  Json config;
  std::optional<double> model_fit_s;
  if (index < options_.points_to_evaluate.size()) {
    config = encoding_.sample(rng);
    detail::deep_merge(config, options_.points_to_evaluate[index]);
  } else if (!ready_for_model() || encoding_.size() == 0) {
    config = encoding_.sample(rng);
  } else {
    using Clock = std::chrono::steady_clock;
    fit_s_.reset();
    const auto start = Clock::now();
    config = encoding_.decode(propose(rng));
    model_fit_s = fit_s_ ? *fit_s_ : std::chrono::duration<double>(Clock::now() - start).count();
  }
  running_[trial_id] = Running{index, encoding_.encode(config), std::nullopt};
  Suggestion out = Suggestion::of(std::move(config));
  out.model_fit_s = model_fit_s;
  return out;
}

bool ModelBasedSearcher::ready_for_model() const {
  return observations_.size() >= static_cast<size_t>(options_.n_startup_trials);
}

std::optional<ModelBasedSearcher::Outcome> ModelBasedSearcher::outcome_of(
    const Json& result) const {
  Outcome out;
  for (const Objective& objective : objectives_) {
    auto it = result.find(objective.metric);
    if (it == result.end() || !it->is_number()) return std::nullopt;
    const double value = it->get<double>();
    if (!std::isfinite(value)) return std::nullopt;
    out.losses.push_back(objective.mode == Mode::kMax ? -value : value);
  }
  out.violation = constraint_violation(result);
  if (auto it = result.find(core::kConstraintsKey); it != result.end()) {
    auto add = [&out](const Json& c) {
      const double v = c.is_number() ? c.get<double>() : NAN;
      out.constraints.push_back(std::isnan(v) ? INFINITY : v);
    };
    if (it->is_array()) {
      for (const Json& c : *it) add(c);
    } else {
      add(*it);
    }
  }
  return out;
}

void ModelBasedSearcher::on_trial_result(const std::string& trial_id, const Json& result) {
  auto it = running_.find(trial_id);
  if (it == running_.end()) return;
  if (auto outcome = outcome_of(result)) {
    on_intermediate(it->second.index, it->second.x, outcome->losses[0], result);
    it->second.last = std::move(outcome);
  }
}

void ModelBasedSearcher::on_trial_complete(const std::string& trial_id, const Json* last_result,
                                           bool error) {
  auto it = running_.find(trial_id);
  if (it == running_.end()) return;
  Running trial = std::move(it->second);
  running_.erase(it);
  if (error) return;
  std::optional<Outcome> outcome = last_result ? outcome_of(*last_result) : std::nullopt;
  if (outcome) on_intermediate(trial.index, trial.x, outcome->losses[0], *last_result);
  on_trial_end(trial.index);
  if (!outcome) outcome = std::move(trial.last);
  if (outcome) {
    const double loss = outcome->losses[0];
    observations_.push_back({trial.index, std::move(trial.x), loss, std::move(outcome->losses),
                             outcome->violation, false, std::move(outcome->constraints)});
    update_prior_offset();
  }
}

void ModelBasedSearcher::update_prior_offset() {
  using detail::same_point;
  const Observation& last = observations_.back();
  // The prior trials lead observations_ (warm_start puts them there).
  size_t priors = 0;
  bool repeat = false;
  for (; priors < observations_.size() && observations_[priors].prior; ++priors) {
    repeat = repeat || same_point(observations_[priors].x, last.x);
  }
  if (!repeat) return;
  const size_t k = objectives_.size();
  prior_offset_.resize(k, 0.0);
  std::vector<double> offset(k, -std::numeric_limits<double>::infinity());
  for (size_t j = priors; j < observations_.size(); ++j) {
    for (size_t i = 0; i < priors; ++i) {
      if (!same_point(observations_[i].x, observations_[j].x)) continue;
      for (size_t m = 0; m < k; ++m) {
        const double earlier = observations_[i].losses[m] - prior_offset_[m];
        offset[m] = std::max(offset[m], observations_[j].losses[m] - earlier);
      }
    }
  }
  for (size_t i = 0; i < priors; ++i) {
    Observation& o = observations_[i];
    for (size_t m = 0; m < k; ++m) o.losses[m] += offset[m] - prior_offset_[m];
    o.loss = o.losses[0];
  }
  prior_offset_ = std::move(offset);
  ++history_version_;
}

std::vector<ModelBasedSearcher::Observation> ModelBasedSearcher::running() const {
  std::vector<Observation> out;
  for (const auto& [id, trial] : running_) out.push_back({trial.index, trial.x, 0.0});
  std::sort(out.begin(), out.end(),
            [](const Observation& a, const Observation& b) { return a.index < b.index; });
  return out;
}

std::vector<std::vector<double>> ModelBasedSearcher::observed_losses() const {
  std::vector<std::vector<double>> out;
  for (const Observation& o : observations_) out.push_back(o.losses);
  return out;
}

std::vector<double> ModelBasedSearcher::observed_violations() const {
  std::vector<double> out;
  for (const Observation& o : observations_) out.push_back(o.violation);
  return out;
}

namespace {

// Constraint values as save() holds them: infinity (not a number reported)
// as null, which JSON can hold.
Json saved_constraints(const std::vector<double>& constraints) {
  Json out = Json::array();
  for (double c : constraints) out.push_back(std::isfinite(c) ? Json(c) : Json());
  return out;
}

std::vector<double> restored_constraints(const Json& saved, const char* key) {
  std::vector<double> out;
  if (!saved.contains(key)) return out;
  for (const Json& c : saved.at(key)) out.push_back(c.is_number() ? c.get<double>() : INFINITY);
  return out;
}

}  // namespace

Json ModelBasedSearcher::save() const {
  Json observations = Json::array();
  for (const Observation& o : observations_) {
    Json saved = {{"index", o.index}, {"x", o.x}, {"loss", o.loss}};
    if (o.losses.size() > 1) saved["losses"] = o.losses;
    if (o.violation != 0) saved["violation"] = o.violation;
    if (o.prior) saved["prior"] = true;
    if (!o.constraints.empty()) saved["constraints"] = saved_constraints(o.constraints);
    observations.push_back(std::move(saved));
  }
  Json running = Json::object();
  for (const auto& [id, trial] : running_) {
    Json saved = {{"index", trial.index}, {"x", trial.x}, {"last_loss", nullptr}};
    if (trial.last) {
      saved["last_loss"] = trial.last->losses[0];
      if (trial.last->losses.size() > 1) saved["last_losses"] = trial.last->losses;
      if (trial.last->violation != 0) saved["last_violation"] = trial.last->violation;
      if (!trial.last->constraints.empty()) {
        saved["last_constraints"] = saved_constraints(trial.last->constraints);
      }
    }
    running[id] = std::move(saved);
  }
  Json state = {{"searcher", name_},
                {"suggested", suggested_},
                {"observations", std::move(observations)},
                {"running", std::move(running)},
                {"model", save_model()}};
  if (!prior_offset_.empty()) state["prior_offset"] = prior_offset_;
  return state;
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
    // Single-objective states hold "loss" alone; a violation only when one.
    auto losses = [](const Json& saved, const char* all, double first) {
      return saved.contains(all) ? saved.at(all).get<std::vector<double>>()
                                 : std::vector<double>{first};
    };
    std::vector<Observation> observations;
    for (const Json& o : state.at("observations")) {
      const double loss = o.at("loss").get<double>();
      observations.push_back({o.at("index").get<uint64_t>(), point(o.at("x")), loss,
                              losses(o, "losses", loss), o.value("violation", 0.0),
                              o.value("prior", false), restored_constraints(o, "constraints")});
    }
    std::map<std::string, Running> running;
    for (const auto& [id, r] : state.at("running").items()) {
      const Json& last = r.at("last_loss");
      std::optional<Outcome> outcome;
      if (!last.is_null()) {
        outcome =
            Outcome{losses(r, "last_losses", last.get<double>()), r.value("last_violation", 0.0),
                    restored_constraints(r, "last_constraints")};
      }
      running[id] = {r.at("index").get<uint64_t>(), point(r.at("x")), std::move(outcome)};
    }
    restore_model(state.at("model"));
    suggested_ = state.at("suggested").get<uint64_t>();
    observations_ = std::move(observations);
    running_ = std::move(running);
    prior_offset_ = state.value("prior_offset", std::vector<double>());
    ++history_version_;
  } catch (const Json::exception& e) {
    throw Error(fmt::format("malformed {} searcher state: {}", name_, e.what()));
  } catch (const Error& e) {
    throw Error(fmt::format("malformed {} searcher state: {}", name_, e.what()));
  }
}

}  // namespace tune::search
