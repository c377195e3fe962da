#include "schedulers/internal/asha.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <unordered_map>

#include "schedulers/internal/stats.h"

namespace tune::schedulers {

using detail::double_from_json;
using detail::number_at;
using detail::to_json;

namespace {

// ASHA's cut-off: the (1 - 1/rf) quantile of a rung's scores
// (np.nanpercentile, as Ray's), from those that are numbers in ascending
// order; NaN when there is none.
double rung_cutoff(const std::vector<double>& sorted_numbers, double rf) {
  return detail::sorted_percentile(sorted_numbers, (1 - 1 / rf) * 100);
}

}  // namespace

// Ray's _Bracket: rungs in descending milestone order, so the first rung a
// result reaches is the highest one.
class AshaScheduler::Bracket {
 public:
  // A rung holds a value of every trial that reached it: with 100,000
  // trials a result's lookup and a cut-off cost what they cost with ten
  // (no scan, no sort), each arrival a binary search and a move.
  struct Rung {
    double milestone;
    std::vector<std::pair<std::string, double>> recorded;  // in arrival order
    std::unordered_map<std::string, double> by_trial;      // the same, by trial
    std::vector<double> sorted_numbers;                    // its values but NaN, ascending

    const double* find(const std::string& id) const {
      auto it = by_trial.find(id);
      return it == by_trial.end() ? nullptr : &it->second;
    }
    void add(const std::string& id, double value) {
      recorded.emplace_back(id, value);
      by_trial.emplace(id, value);
      if (!std::isnan(value)) {
        sorted_numbers.insert(std::upper_bound(sorted_numbers.begin(), sorted_numbers.end(), value),
                              value);
      }
    }
    void clear() {
      recorded.clear();
      by_trial.clear();
      sorted_numbers.clear();
    }
  };

  Bracket(double min_t, double max_t, double rf, int64_t s, bool stop_last_trials)
      : rf_(rf), stop_last_trials_(stop_last_trials) {
    // MAX_RUNGS = int(np.log(max_t / min_t) / np.log(rf) - s + 1)
    const auto max_rungs =
        static_cast<int64_t>(std::log(max_t / min_t) / std::log(rf) - static_cast<double>(s) + 1);
    for (int64_t k = max_rungs - 1; k >= 0; --k) {
      rungs_.push_back({min_t * std::pow(rf, static_cast<double>(k + s)), {}});
    }
  }

  // The (1 - 1/rf) quantile of a rung's values; nullopt when it has none.
  std::optional<double> cutoff(const Rung& rung) const {
    if (rung.recorded.empty()) return std::nullopt;
    return rung_cutoff(rung.sorted_numbers, rf_);
  }

  // Where and against what a trial was cut (scores with the sign folded in).
  struct Cut {
    size_t rung = 0;  // 1: the lowest
    double milestone = 0;
    double cutoff = 0;
    size_t recorded = 0;  // values it was the quantile of
  };

  // Ray's _Bracket.on_result, `score` with the sign folded in. On kStop,
  // `cut` (when given) says where.
  Decision on_result(const std::string& id, double t, double score, Cut* cut = nullptr) {
    Decision action = Decision::kContinue;
    for (size_t r = 0; r < rungs_.size(); ++r) {
      Rung& rung = rungs_[r];
      const bool seen = rung.find(id) != nullptr;
      // The decision to continue past this rung was made already.
      if (t >= rung.milestone && seen && !stop_last_trials_) break;
      if (t < rung.milestone || seen) continue;
      if (auto c = cutoff(rung); c && score < *c) {
        action = Decision::kStop;
        if (cut) *cut = {rungs_.size() - r, rung.milestone, *c, rung.recorded.size()};
      }
      rung.add(id, score);
      break;
    }
    return action;
  }

  // Promotion: the rung `t` reaches that has no value of `id` yet, recorded
  // now; nullopt when `t` reaches no new rung.
  std::optional<size_t> record(const std::string& id, double t, double score) {
    for (size_t r = 0; r < rungs_.size(); ++r) {
      Rung& rung = rungs_[r];
      if (t < rung.milestone) continue;
      if (rung.find(id) != nullptr) return std::nullopt;
      rung.add(id, score);
      return r;
    }
    return std::nullopt;
  }

  // The first iteration at which on_result or record may decide about `id`
  // again after its result at `iteration`: the next rung's milestone, or
  // the next iteration while a rung already reached has no value of `id`
  // (its result lacked the metric).
  int64_t next_decision(const std::string& id, int64_t iteration) const {
    int64_t next = std::numeric_limits<int64_t>::max();
    for (const Rung& rung : rungs_) {
      const auto at = static_cast<int64_t>(std::ceil(rung.milestone));
      if (at > iteration) {
        next = std::min(next, at);
      } else if (rung.find(id) == nullptr) {
        return iteration + 1;
      }
    }
    return next;
  }

  // The top floor(n / rf) trials of rung `r`, best first (NaN last; ties in
  // arrival order).
  std::vector<std::string> top(size_t r) const {
    auto ranked = rungs_[r].recorded;
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      if (std::isnan(a.second)) return false;
      if (std::isnan(b.second)) return true;
      return a.second > b.second;
    });
    const auto keep = static_cast<size_t>(std::floor(static_cast<double>(ranked.size()) / rf_));
    std::vector<std::string> ids;
    for (size_t i = 0; i < keep && i < ranked.size(); ++i) {
      if (!std::isnan(ranked[i].second)) ids.push_back(ranked[i].first);
    }
    return ids;
  }

  Json save() const {
    Json rungs = Json::array();
    for (const Rung& rung : rungs_) {
      Json recorded = Json::array();
      for (const auto& [id, v] : rung.recorded) recorded.push_back({id, to_json(v)});
      rungs.push_back({{"milestone", rung.milestone}, {"recorded", recorded}});
    }
    return rungs;
  }

  void restore(const Json& rungs) {
    if (rungs.size() != rungs_.size()) {
      throw Error("ASHA restore: the saved rungs do not match the scheduler's options");
    }
    for (size_t r = 0; r < rungs_.size(); ++r) {
      rungs_[r].clear();
      for (const Json& entry : rungs[r].at("recorded")) {
        rungs_[r].add(entry.at(0).get<std::string>(), double_from_json(entry.at(1)));
      }
    }
  }

  std::string debug_string() const {
    std::string out = "Bracket:";
    for (const Rung& rung : rungs_) {
      auto cut = cutoff(rung);
      out += fmt::format(" | Iter {:g}: {} recorded, cutoff {}", rung.milestone,
                         rung.recorded.size(), cut ? fmt::format("{:.6g}", *cut) : "None");
    }
    return out;
  }

  const std::vector<Rung>& rungs() const { return rungs_; }

 private:
  double rf_;
  bool stop_last_trials_;
  std::vector<Rung> rungs_;
};

AshaScheduler::AshaScheduler(AshaOptions options)
    : options_(std::move(options)),
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
      reasons_.set(
          trial.trial_id,
          fmt::format("{} at rung {} of {} (milestone {:g}): {} {:.6g} is below the "
                      "cut-off {:.6g} of the {} recorded there",
                      name(), cut.rung, bracket.rungs().size(), cut.milestone, objective_.metric(),
                      sign * *score, sign * cut.cutoff, detail::count_of(cut.recorded, "trial")));
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

Json AshaScheduler::save() const {
  Json brackets = Json::array();
  for (const auto& b : brackets_) brackets.push_back(b.save());
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
}

std::string AshaScheduler::debug_string() const {
  std::string out = fmt::format("AsyncHyperBand{}: num_stopped={}",
                                options_.promotion ? " (promotion)" : "", num_stopped_);
  if (options_.promotion) out += fmt::format(", paused at rungs={}", paused_at_.size());
  for (const auto& b : brackets_) out += "; " + b.debug_string();
  return out;
}

}  // namespace tune::schedulers
