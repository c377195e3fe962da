#include "schedulers/internal/pbt.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tune::schedulers {

using detail::number_at;

PbtScheduler::PbtScheduler(PbtOptions options) : PbtScheduler(std::move(options), "pbt", false) {}

PbtScheduler::PbtScheduler(PbtOptions options, std::string name, bool explores_itself)
    : options_(std::move(options)),
      name_(std::move(name)),
      objective_(options_.metric, options_.mode),
      rng_(options_.seed) {
  auto check = [&](bool ok, const char* key, const std::string& message) {
    if (!ok) throw ConfigError::at_key(key, fmt::format("{} scheduler: {}", name_, message));
  };
  check(options_.perturbation_interval > 0, "perturbation_interval",
        "perturbation_interval must be > 0");
  check(options_.burn_in_period >= 0, "burn_in_period", "burn_in_period must be >= 0");
  check(options_.quantile_fraction >= 0 && options_.quantile_fraction <= 0.5, "quantile_fraction",
        "quantile_fraction must be between 0 and 0.5");
  check(options_.resample_probability >= 0 && options_.resample_probability <= 1,
        "resample_probability", "resample_probability must be between 0 and 1");
  check(!options_.perturbation_factors.empty(), "perturbation_factors",
        "perturbation_factors must not be empty");
  check(!options_.time_attr.empty(), "time_attr", "time_attr must not be empty");
  if (!explores_itself) {
    mutations_ = detail::parse_mutations(options_.hyperparam_mutations, "hyperparam_mutations");
    check(!mutations_.empty() || options_.custom_explore_fn != nullptr, "hyperparam_mutations",
          "needs hyperparam_mutations or a custom_explore_fn");
  }
  next_perturbation_sync_ = std::max(options_.perturbation_interval, options_.burn_in_period);
}

void PbtScheduler::set_search_properties(const std::string& metric, Mode mode) {
  objective_.set_defaults(name_, metric, mode);
}

PbtScheduler::TrialState& PbtScheduler::state_of(const std::string& trial_id, const Json& config) {
  auto [it, added] = trials_.try_emplace(trial_id);
  if (added) {
    order_.push_back(trial_id);
    it->second.config = config;
  }
  return it->second;
}

void PbtScheduler::on_trial_add(const TrialView& trial) {
  state_of(trial.trial_id, trial.config);
  states_.set(trial.trial_id, TrialStatus::kPending);
}

std::pair<std::vector<std::string>, std::vector<std::string>> PbtScheduler::quantiles() const {
  std::vector<std::string> scored;
  for (const auto& id : order_) {
    if (trials_.at(id).last_score) scored.push_back(id);
  }
  // Python's sort is stable: ties keep the order trials were added in.
  std::stable_sort(scored.begin(), scored.end(), [&](const auto& a, const auto& b) {
    return *trials_.at(a).last_score < *trials_.at(b).last_score;
  });
  if (scored.size() <= 1) return {};
  const double n = static_cast<double>(scored.size());
  auto num = static_cast<size_t>(std::ceil(n * options_.quantile_fraction));
  if (static_cast<double>(num) > n / 2) num = static_cast<size_t>(std::floor(n / 2));
  return {std::vector<std::string>(scored.begin(), scored.begin() + num),
          std::vector<std::string>(scored.end() - num, scored.end())};
}

void PbtScheduler::maybe_exploit(const std::string& trial_id, const std::vector<std::string>& lower,
                                 const std::vector<std::string>& upper) {
  if (std::find(lower.begin(), lower.end(), trial_id) == lower.end()) return;
  std::vector<std::string> donors;
  for (const auto& id : upper) {
    if (id != trial_id && trials_.at(id).checkpoint_iteration > 0) donors.push_back(id);
  }
  if (donors.empty()) return;  // Ray: "no checkpoint for trial ... Skip exploit"
  const std::string& donor =
      donors[std::min(static_cast<size_t>(detail::unit(rng_) * static_cast<double>(donors.size())),
                      donors.size() - 1)];
  const TrialState& from = trials_.at(donor);
  Json config = explore(trial_id, donor, from.config);
  if (options_.custom_explore_fn) config = options_.custom_explore_fn(std::move(config));
  TrialState& to = trials_.at(trial_id);
  to.last_perturbation_time = from.last_perturbation_time;
  to.last_train_time = from.last_train_time;
  to.config = config;
  exploits_[trial_id] = Exploit{donor, std::move(config)};
  ++num_perturbations_;
}

Json PbtScheduler::explore(const std::string&, const std::string&, const Json& donor_config) {
  return detail::explore(donor_config, mutations_,
                         {options_.resample_probability, options_.perturbation_factors}, rng_);
}

Decision PbtScheduler::on_trial_result(const TrialView& trial, const Json& result) {
  const std::string& id = trial.trial_id;
  TrialState& state = state_of(id, trial.config);
  state.config = trial.config;
  state.checkpoint_iteration = trial.checkpoint_iteration;
  states_.set(id, TrialStatus::kRunning);
  const auto time = number_at(result, options_.time_attr);
  const auto score = objective_.score(result);
  if (!time || !score) return Decision::kContinue;
  if (*time < options_.burn_in_period) return Decision::kContinue;
  if (*time - state.last_perturbation_time < options_.perturbation_interval) {
    return Decision::kContinue;  // avoid checkpoint overhead
  }
  state.last_score = *score;
  state.last_train_time = *time;
  on_perturbation_point(id, *time, *score, trial.config);

  Decision decision = Decision::kContinue;
  if (!options_.synch) {
    state.last_perturbation_time = *time;
    auto [lower, upper] = quantiles();
    if (states_.others_waiting(id)) decision = Decision::kPause;  // time-multiplex
    maybe_exploit(id, lower, upper);
    if (exploits_.contains(id)) decision = Decision::kPause;
  } else {
    decision = Decision::kPause;  // every trial waits at the point
    bool all_there = true;
    for (const auto& other : order_) {
      if (other != id && trials_.at(other).last_train_time < next_perturbation_sync_) {
        all_there = false;
      }
    }
    if (all_there) {
      auto [lower, upper] = quantiles();
      // Ray orders upper, middle, lower so strong trials checkpoint first;
      // here only the perturbation times matter, then the exploits.
      double max_train_time = 0;
      for (const auto& other : order_) {
        trials_.at(other).last_perturbation_time = *time;
        max_train_time = std::max(max_train_time, trials_.at(other).last_train_time);
      }
      for (const auto& other : lower) maybe_exploit(other, lower, upper);
      next_perturbation_sync_ =
          std::max(next_perturbation_sync_ + options_.perturbation_interval, max_train_time);
    }
  }
  if (decision == Decision::kPause) states_.set(id, TrialStatus::kPaused);
  return decision;
}

void PbtScheduler::forget(const std::string& trial_id) {
  trials_.erase(trial_id);
  std::erase(order_, trial_id);
  exploits_.erase(trial_id);
  states_.forget(trial_id);
}

void PbtScheduler::on_trial_complete(const TrialView& trial, const Json*) {
  forget(trial.trial_id);
}
void PbtScheduler::on_trial_error(const TrialView& trial) { forget(trial.trial_id); }
void PbtScheduler::on_trial_remove(const TrialView& trial) { forget(trial.trial_id); }

int PbtScheduler::choose_trial_to_run(const std::vector<TrialView>& candidates) {
  // Ray: the waiting trial with the least training time, so the population
  // advances evenly; in synch mode only those short of the next sync point.
  // Among equals, trials with an exploit to apply go first (see pbt.h).
  int chosen = -1;
  auto key = [&](size_t i) {
    auto it = trials_.find(candidates[i].trial_id);
    const double t = it == trials_.end() ? 0 : it->second.last_train_time;
    return std::make_pair(t, exploits_.contains(candidates[i].trial_id) ? 0 : 1);
  };
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (options_.synch && key(i).first >= next_perturbation_sync_) continue;
    if (chosen < 0 || key(i) < key(static_cast<size_t>(chosen))) chosen = static_cast<int>(i);
  }
  if (chosen >= 0) states_.set(candidates[chosen].trial_id, TrialStatus::kRunning);
  return chosen;
}

int64_t PbtScheduler::continues_through(const TrialView& trial, int64_t iteration) const {
  if (options_.time_attr != "training_iteration") return iteration;
  auto it = trials_.find(trial.trial_id);
  const double last = it == trials_.end() ? 0 : it->second.last_perturbation_time;
  // on_trial_result continues below both of these, whatever the result says.
  const double point = std::max(last + options_.perturbation_interval, options_.burn_in_period);
  return std::max(iteration, static_cast<int64_t>(std::ceil(point)) - 1);
}

std::optional<Exploit> PbtScheduler::take_exploit(const std::string& trial_id) {
  auto it = exploits_.find(trial_id);
  if (it == exploits_.end()) return std::nullopt;
  Exploit exploit = std::move(it->second);
  exploits_.erase(it);
  return exploit;
}

Json PbtScheduler::save() const {
  Json trials = Json::array();
  for (const auto& id : order_) {
    const TrialState& s = trials_.at(id);
    trials.push_back({{"id", id},
                      {"last_score", s.last_score ? Json(*s.last_score) : Json()},
                      {"last_perturbation_time", s.last_perturbation_time},
                      {"last_train_time", s.last_train_time},
                      {"checkpoint_iteration", s.checkpoint_iteration},
                      {"config", s.config}});
  }
  Json exploits = Json::object();
  for (const auto& [id, e] : exploits_) {
    exploits[id] = {{"donor_id", e.donor_id}, {"new_config", e.new_config}};
  }
  std::ostringstream rng;
  rng << rng_;
  return {{"trials", trials},
          {"exploits", exploits},
          {"states", states_.save()},
          {"next_perturbation_sync", next_perturbation_sync_},
          {"num_perturbations", num_perturbations_},
          {"rng", rng.str()},
          {"extra", save_extra()}};
}

void PbtScheduler::restore(const Json& state) {
  order_.clear();
  trials_.clear();
  for (const Json& t : state.at("trials")) {
    const auto id = t.at("id").get<std::string>();
    order_.push_back(id);
    TrialState& s = trials_[id];
    if (!t.at("last_score").is_null()) s.last_score = t.at("last_score").get<double>();
    s.last_perturbation_time = t.at("last_perturbation_time").get<double>();
    s.last_train_time = t.at("last_train_time").get<double>();
    s.checkpoint_iteration = t.at("checkpoint_iteration").get<int64_t>();
    s.config = t.at("config");
  }
  exploits_.clear();
  for (const auto& [id, e] : state.at("exploits").items()) {
    exploits_[id] = Exploit{e.at("donor_id").get<std::string>(), e.at("new_config")};
  }
  states_.restore(state.at("states"));
  next_perturbation_sync_ = state.at("next_perturbation_sync").get<double>();
  num_perturbations_ = state.at("num_perturbations").get<int64_t>();
  std::istringstream rng(state.at("rng").get<std::string>());
  rng >> rng_;
  restore_extra(state.at("extra"));
}

std::string PbtScheduler::debug_string() const {
  auto [lower, upper] = quantiles();
  std::string out = fmt::format("{}{}: {} perturbs, {} trials, {} exploits pending", name_,
                                options_.synch ? " (synch)" : "", num_perturbations_,
                                trials_.size(), exploits_.size());
  if (options_.synch) out += fmt::format(", next sync at {:g}", next_perturbation_sync_);
  if (!upper.empty()) {
    out += fmt::format(", top score {:.6g}, bottom score {:.6g}",
                       *trials_.at(upper.back()).last_score, *trials_.at(lower.front()).last_score);
  }
  return out;
}

}  // namespace tune::schedulers
