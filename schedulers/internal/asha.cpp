// AshaScheduler's decisions and saved state; its brackets are in
// asha_bracket.h.
#include "schedulers/internal/asha.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "schedulers/internal/asha_bracket.h"
#include "schedulers/internal/stats.h"

namespace tune::schedulers {

using detail::double_from_json;
using detail::number_at;
using detail::to_json;

AshaScheduler::AshaScheduler(AshaOptions options, std::string kind)
    : options_(std::move(options)),
      kind_(std::move(kind)),
      objective_(options_.metric, options_.mode),
      rng_(options_.seed) {
  auto check = [](bool ok, const char* key, const std::string& message) {
    if (!ok) throw ConfigError::at_key(key, "asha scheduler: " + message);
  };
  check(options_.max_t > 0, "max_t", "max_t must be > 0");
  check(options_.grace_period > 0, "grace_period", "grace_period must be > 0");
  check(options_.max_t >= options_.grace_period, "grace_period", "grace_period must be <= max_t");
  check(options_.reduction_factor > 1, "reduction_factor", "reduction_factor must be > 1");
  check(options_.brackets > 0, "brackets", "brackets must be > 0");
  check(!options_.time_attr.empty(), "time_attr", "time_attr must not be empty");
  for (int64_t s = 0; s < options_.brackets; ++s) {
    brackets_.emplace_back(options_.grace_period, options_.max_t, options_.reduction_factor, s,
                           options_.stop_last_trials);
  }
}

AshaScheduler::~AshaScheduler() = default;
AshaScheduler::AshaScheduler(AshaScheduler&&) noexcept = default;
AshaScheduler& AshaScheduler::operator=(AshaScheduler&&) noexcept = default;

void AshaScheduler::set_search_properties(const std::string& metric, Mode mode) {
  objective_.set_defaults("asha", metric, mode);
}

void AshaScheduler::on_trial_add(const TrialView& trial) {
  // Ray: softmax over the brackets' rung counts, np.random.choice.
  size_t idx = 0;
  if (brackets_.size() > 1) {
    double largest = 0;
    for (const auto& b : brackets_) largest = std::max(largest, double(b.rungs().size()));
    std::vector<double> weights;
    double total = 0;
    for (const auto& b : brackets_) {
      weights.push_back(std::exp(double(b.rungs().size()) - largest));
      total += weights.back();
    }
    double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53 * total;
    while (idx + 1 < weights.size() && u >= weights[idx]) u -= weights[idx++];
  }
  trial_bracket_[trial.trial_id] = idx;
  states_.set(trial.trial_id, TrialStatus::kPending);
}

Decision AshaScheduler::on_trial_result(const TrialView& trial, const Json& result) {
  auto it = trial_bracket_.find(trial.trial_id);
  if (it == trial_bracket_.end()) return Decision::kContinue;  // removed or never added
  states_.set(trial.trial_id, TrialStatus::kRunning);
  paused_at_.erase(trial.trial_id);
  const auto t = number_at(result, options_.time_attr);
  const auto score = objective_.score(result);
  if (!t || !score) return Decision::kContinue;

  Decision action = Decision::kContinue;
  Bracket& bracket = brackets_[it->second];
  if (*t >= options_.max_t && options_.stop_last_trials) {
    action = Decision::kStop;
    reasons_.set(trial.trial_id, fmt::format("{}: reached max_t {:g}, where every trial ends",
                                             name(), options_.max_t));
  } else if (!options_.promotion) {
    Bracket::Cut cut;
    action = bracket.on_result(trial.trial_id, *t, *score, &cut);
    if (action == Decision::kStop) {
      const double sign = objective_.sign();
      reasons_.set(trial.trial_id,
                   // "worse than": below the cut-off in max mode, above it in min mode.
                   fmt::format("{} at rung {} of {} (milestone {:g}): {} {:.6g} is {} the "
                               "cut-off {:.6g} of the {} recorded there",
                               name(), cut.rung, bracket.rungs().size(), cut.milestone,
                               objective_.metric(), sign * *score, sign > 0 ? "below" : "above",
                               sign * cut.cutoff, detail::count_of(cut.recorded, "trial")));
    }
  } else if (auto rung = bracket.record(trial.trial_id, *t, *score)) {
    const Place place{it->second, *rung};
    // Continue at once when promotable and no better-placed trial waits for a slot.
    const double milestone = bracket.rungs()[*rung].milestone;
    if (!promotable(trial.trial_id, place) || best_promotable(milestone)) {
      action = Decision::kPause;
      paused_at_[trial.trial_id] = place;
      states_.set(trial.trial_id, TrialStatus::kPaused);
    }
  }
  if (action == Decision::kStop) {
    ++num_stopped_;
    states_.forget(trial.trial_id);
  }
  return action;
}

int64_t AshaScheduler::continues_through(const TrialView& trial, int64_t iteration) const {
  auto it = trial_bracket_.find(trial.trial_id);
  if (it == trial_bracket_.end() || options_.time_attr != "training_iteration") return iteration;
  int64_t next = brackets_[it->second].next_decision(trial.trial_id, iteration);
  if (options_.stop_last_trials) {
    next = std::min(next, static_cast<int64_t>(std::ceil(options_.max_t)));
  }
  return std::max(iteration, next - 1);
}

void AshaScheduler::on_trial_complete(const TrialView& trial, const Json* last_result) {
  reasons_.forget(trial.trial_id);
  auto it = trial_bracket_.find(trial.trial_id);
  if (it != trial_bracket_.end() && last_result != nullptr) {
    const auto t = number_at(*last_result, options_.time_attr);
    const auto score = objective_.score(*last_result);
    if (t && score) {
      // Ray records the final result; in the promotion variant it only adds
      // a value to a rung, since the trial is done either way.
      if (options_.promotion) {
        brackets_[it->second].record(trial.trial_id, *t, *score);
      } else {
        brackets_[it->second].on_result(trial.trial_id, *t, *score);
      }
    }
  }
  forget(trial.trial_id);
}

void AshaScheduler::on_trial_error(const TrialView& trial) { on_trial_remove(trial); }
void AshaScheduler::on_trial_remove(const TrialView& trial) {
  forget(trial.trial_id);
  reasons_.forget(trial.trial_id);
}

std::string AshaScheduler::decision_reason(const std::string& trial_id) const {
  return reasons_.get(trial_id);
}

std::string AshaScheduler::name() const {
  return options_.promotion ? "AsyncHyperBand (promotion)" : "AsyncHyperBand";
}

void AshaScheduler::forget(const std::string& trial_id) {
  std::erase(to_stop_, trial_id);
  trial_bracket_.erase(trial_id);
  paused_at_.erase(trial_id);
  states_.forget(trial_id);
}

bool AshaScheduler::promotable(const std::string& trial_id, const Place& place) const {
  auto top = brackets_[place.bracket].top(place.rung);
  return std::find(top.begin(), top.end(), trial_id) != top.end();
}

std::optional<std::string> AshaScheduler::best_promotable(double above) const {
  // Highest milestone first across brackets; within a rung, best first.
  std::vector<std::pair<double, std::pair<size_t, size_t>>> rungs;
  for (size_t b = 0; b < brackets_.size(); ++b) {
    for (size_t r = 0; r < brackets_[b].rungs().size(); ++r) {
      if (brackets_[b].rungs()[r].milestone > above) {
        rungs.push_back({brackets_[b].rungs()[r].milestone, {b, r}});
      }
    }
  }
  std::stable_sort(rungs.begin(), rungs.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  for (const auto& [milestone, place] : rungs) {
    for (const std::string& id : brackets_[place.first].top(place.second)) {
      auto p = paused_at_.find(id);
      // Paused there and not chosen to resume yet.
      if (p != paused_at_.end() && p->second.bracket == place.first &&
          p->second.rung == place.second && states_.status(id) == TrialStatus::kPaused) {
        return id;
      }
    }
  }
  return std::nullopt;
}

int AshaScheduler::choose_trial_to_run(const std::vector<TrialView>& candidates) {
  int chosen = -1;
  if (options_.promotion) {
    // Promotable trials first: the ones paused at a rung and still in its top.
    std::map<std::string, int> index;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i].status == TrialStatus::kPaused) {
        index[candidates[i].trial_id] = static_cast<int>(i);
      }
    }
    std::vector<std::pair<double, std::pair<size_t, size_t>>> rungs;
    for (size_t b = 0; b < brackets_.size(); ++b) {
      for (size_t r = 0; r < brackets_[b].rungs().size(); ++r) {
        rungs.push_back({brackets_[b].rungs()[r].milestone, {b, r}});
      }
    }
    std::stable_sort(rungs.begin(), rungs.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    for (const auto& [milestone, place] : rungs) {
      for (const std::string& id : brackets_[place.first].top(place.second)) {
        auto p = paused_at_.find(id);
        auto i = index.find(id);
        if (i != index.end() && p != paused_at_.end() && p->second.bracket == place.first &&
            p->second.rung == place.second) {
          chosen = i->second;
          break;
        }
      }
      if (chosen >= 0) break;
    }
  }
  // Then, as FIFO, the first trial not held at a rung (pending, or paused by
  // someone else, e.g. a restored experiment).
  for (size_t i = 0; chosen < 0 && i < candidates.size(); ++i) {
    const std::string& id = candidates[i].trial_id;
    if (!paused_at_.contains(id) &&
        std::find(to_stop_.begin(), to_stop_.end(), id) == to_stop_.end()) {
      chosen = static_cast<int>(i);
    }
  }
  // Running from here on, for take_trials_to_stop's "nothing else can run".
  if (chosen >= 0) states_.set(candidates[chosen].trial_id, TrialStatus::kRunning);
  return chosen;
}

std::vector<std::string> AshaScheduler::take_trials_to_stop() {
  if (options_.promotion && !paused_at_.empty() && states_.count(TrialStatus::kRunning) == 0 &&
      states_.count(TrialStatus::kPending) == 0 && !best_promotable()) {
    std::vector<std::string> losers;
    for (const auto& [id, place] : paused_at_) {
      losers.push_back(id);
      const auto& rungs = brackets_[place.bracket].rungs();
      reasons_.set(id, fmt::format("{}: not promoted from rung {} of {} (milestone {:g}), and "
                                   "no other trial is left to run",
                                   name(), rungs.size() - place.rung, rungs.size(),
                                   rungs[place.rung].milestone));
    }
    for (const auto& id : losers) forget(id);
    num_stopped_ += static_cast<int64_t>(losers.size());
    to_stop_.insert(to_stop_.end(), losers.begin(), losers.end());
  }
  // Again each turn until removed: the last one paused may still be pausing.
  return to_stop_;
}

std::vector<double> AshaScheduler::milestones(size_t b) const {
  std::vector<double> out;
  for (const auto& rung : brackets_.at(b).rungs()) out.push_back(rung.milestone);
  return out;
}

std::vector<SchedulerState::AshaBracket> AshaScheduler::saved_brackets(const Json& state,
                                                                       double reduction_factor,
                                                                       double sign) {
  std::vector<SchedulerState::AshaBracket> out;
  for (const Json& bracket : state.at("brackets")) {
    SchedulerState::AshaBracket& b = out.emplace_back();
    for (auto rung = bracket.rbegin(); rung != bracket.rend(); ++rung) {  // saved highest first
      SchedulerState::Rung& r = b.rungs.emplace_back();
      r.milestone = rung->at("milestone").get<double>();
      std::vector<double> scores;
      for (const Json& entry : rung->at("recorded")) {
        scores.push_back(double_from_json(entry.at(1)));
        r.recorded.emplace_back(entry.at(0).get<std::string>(), sign * scores.back());
      }
      // The cut-off each met on arrival: of the scores before it.
      const double percent = (1 - 1 / reduction_factor) * 100;
      detail::RunningPercentile before(scores);
      for (size_t i = 0; i < scores.size(); ++i) {
        const double cutoff = before.percentile(percent);
        r.cutoff_at_arrival.push_back(sign * cutoff);
        r.below_cutoff.push_back(scores[i] < cutoff);  // false for NaN
        before.add(i);
      }
      r.cutoff = sign * before.percentile(percent);
    }
  }
  return out;
}

StateParts AshaScheduler::save_parts() {
  StateParts out{.complete = parts_saved_.empty()};
  out.head = save_head(false);
  if (out.complete) {
    parts_saved_.clear();
    for (const Bracket& b : brackets_) parts_saved_.emplace_back(b.rungs().size(), 0);
  }
  for (size_t b = 0; b < brackets_.size(); ++b) {
    for (size_t r = 0; r < brackets_[b].rungs().size(); ++r) {
      const Bracket::Rung& rung = brackets_[b].rungs()[r];
      size_t& saved = parts_saved_[b][r];
      if (!out.complete && saved == rung.recorded.size()) continue;  // nothing new
      // From the chunk the last save left partial (or the first).
      for (size_t from = saved / kStateChunk * kStateChunk; from < rung.recorded.size();
           from += kStateChunk) {
        out.chunks.push_back({fmt::format("/brackets/{}/{}/recorded", b, r),
                              static_cast<int64_t>(from / kStateChunk),
                              Bracket::saved_values(
                                  rung, from, std::min(from + kStateChunk, rung.recorded.size()))});
      }
      saved = rung.recorded.size();
    }
  }
  return out;
}

Json AshaScheduler::save() const { return save_head(true); }

Json AshaScheduler::save_head(bool with_values) const {
  Json brackets = Json::array();
  for (const auto& b : brackets_) brackets.push_back(b.save(with_values));
  Json paused = Json::object();
  for (const auto& [id, p] : paused_at_) paused[id] = {p.bracket, p.rung};
  std::ostringstream rng;
  rng << rng_;
  return {{"brackets", brackets},     {"trial_bracket", trial_bracket_}, {"paused_at", paused},
          {"states", states_.save()}, {"num_stopped", num_stopped_},     {"rng", rng.str()},
          {"to_stop", to_stop_}};
}

void AshaScheduler::restore(const Json& state) {
  const Json& brackets = state.at("brackets");
  if (brackets.size() != brackets_.size()) {
    throw Error("ASHA restore: the saved brackets do not match the scheduler's options");
  }
  for (size_t b = 0; b < brackets_.size(); ++b) brackets_[b].restore(brackets[b]);
  trial_bracket_ = state.at("trial_bracket").get<std::map<std::string, size_t>>();
  paused_at_.clear();
  for (const auto& [id, p] : state.at("paused_at").items()) {
    paused_at_[id] = {p.at(0).get<size_t>(), p.at(1).get<size_t>()};
  }
  states_.restore(state.at("states"));
  num_stopped_ = state.at("num_stopped").get<int64_t>();
  to_stop_ = state.value("to_stop", std::vector<std::string>{});
  std::istringstream rng(state.at("rng").get<std::string>());
  rng >> rng_;
  parts_saved_.clear();
}

std::string AshaScheduler::debug_string() const {
  std::string out = fmt::format("AsyncHyperBand{}: num_stopped={}",
                                options_.promotion ? " (promotion)" : "", num_stopped_);
  if (options_.promotion) out += fmt::format(", paused at rungs={}", paused_at_.size());
  for (const auto& b : brackets_) out += "; " + b.debug_string();
  return out;
}

}  // namespace tune::schedulers
