// HyperBandScheduler's decisions and saved state; its brackets are in
// hyperband_bracket.h.
#include "schedulers/internal/hyperband.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "schedulers/internal/asha.h"
#include "schedulers/internal/hyperband_bracket.h"

namespace tune::schedulers {

using detail::double_from_json;
using detail::number_at;

namespace {

// Throws ConfigError for options no HyperBand can run with.
void check(const HyperBandOptions& o) {
  if (!(o.max_t >= 1)) {
    throw ConfigError::at_key("max_t", "hyperband scheduler: max_t must be >= 1");
  }
  if (!(o.reduction_factor > 1)) {
    throw ConfigError::at_key("reduction_factor",
                              "hyperband scheduler: reduction_factor must be > 1");
  }
  if (o.time_attr.empty()) {
    throw ConfigError::at_key("time_attr", "hyperband scheduler: time_attr must not be empty");
  }
}

// s_max + 1: int(np.round(np.log(max_t) / np.log(eta))) + 1; np.round rounds half to even.
int64_t bracket_count(const HyperBandOptions& o) {
  return static_cast<int64_t>(std::nearbyint(std::log(o.max_t) / std::log(o.reduction_factor))) + 1;
}

// Bracket s's first milestone; 0: the bracket is skipped ("Bracket too small").
int64_t first_milestone(const HyperBandOptions& o, int64_t s) {
  return static_cast<int64_t>(o.max_t * std::pow(o.reduction_factor, -double(s)));
}

}  // namespace

HyperBandScheduler::HyperBandScheduler(HyperBandOptions options)
    : options_(std::move(options)), objective_(options_.metric, options_.mode) {
  check(options_);
  s_max_1_ = bracket_count(options_);
  bands_.emplace_back();
}

AshaOptions asynchronous_hyperband(const HyperBandOptions& options) {
  check(options);
  int64_t brackets = 0;
  while (brackets < bracket_count(options) && first_milestone(options, brackets) >= 1) {
    ++brackets;
  }
  return {.time_attr = options.time_attr,
          .metric = options.metric,
          .mode = options.mode,
          .max_t = options.max_t,
          .grace_period = static_cast<double>(first_milestone(options, brackets - 1)),
          .reduction_factor = options.reduction_factor,
          .brackets = brackets,
          .stop_last_trials = options.stop_last_trials,
          .seed = options.seed};
}

std::unique_ptr<TrialScheduler> make_hyperband_scheduler(HyperBandOptions options) {
  if (options.asynchronous) {
    return std::make_unique<AshaScheduler>(asynchronous_hyperband(options), "hyperband");
  }
  return std::make_unique<HyperBandScheduler>(std::move(options));
}

HyperBandScheduler::~HyperBandScheduler() = default;
HyperBandScheduler::HyperBandScheduler(HyperBandScheduler&&) noexcept = default;
HyperBandScheduler& HyperBandScheduler::operator=(HyperBandScheduler&&) noexcept = default;

int64_t HyperBandScheduler::n0(int64_t s) const {
  return static_cast<int64_t>(std::ceil(static_cast<double>(s_max_1_) / static_cast<double>(s + 1) *
                                        std::pow(options_.reduction_factor, double(s))));
}

int64_t HyperBandScheduler::r0(int64_t s) const { return first_milestone(options_, s); }

void HyperBandScheduler::set_search_properties(const std::string& metric, Mode mode) {
  objective_.set_defaults("hyperband", metric, mode);
}

void HyperBandScheduler::on_trial_add(const TrialView& trial) {
  // A bracket takes n0 trials. Ray's counts its live trials instead, so when
  // trials are created one at a time (a model-based searcher) and finish
  // before the next arrives, the bracket s = 0 (n0 trials to max_t; the
  // first, or HyperBandForBOHB's last) takes every new trial from then on.
  if (current_bracket_ < 0 || brackets_[current_bracket_].ever_filled()) {
    while (true) {
      if (static_cast<int64_t>(bands_.back().size()) == s_max_1_) bands_.emplace_back();
      const auto opened = static_cast<int64_t>(bands_.back().size());
      // HyperBandForBOHB (and BOHB) open the largest bracket first.
      const int64_t s = options_.for_bohb ? s_max_1_ - 1 - opened : opened;
      if (r0(s) == 0) {  // "Bracket too small": skipped
        bands_.back().push_back(-1);
        current_bracket_ = -1;
        continue;
      }
      brackets_.emplace_back(bands_.size() - 1, s, n0(s), r0(s), options_.max_t,
                             options_.reduction_factor, options_.stop_last_trials);
      current_bracket_ = static_cast<int64_t>(brackets_.size()) - 1;
      bands_.back().push_back(current_bracket_);
      break;
    }
  }
  brackets_[current_bracket_].add_trial(trial.trial_id);
  changed_.insert(static_cast<size_t>(current_bracket_));
  trial_bracket_[trial.trial_id] = static_cast<size_t>(current_bracket_);
  states_.set(trial.trial_id, TrialStatus::kPending);
}

Decision HyperBandScheduler::on_trial_result(const TrialView& trial, const Json& result) {
  auto it = trial_bracket_.find(trial.trial_id);
  if (it == trial_bracket_.end()) return Decision::kContinue;
  Bracket& bracket = brackets_[it->second];
  if (!bracket.has(trial.trial_id)) return Decision::kContinue;
  changed_.insert(it->second);
  states_.set(trial.trial_id, TrialStatus::kRunning);
  const auto time = number_at(result, options_.time_attr);
  if (!time) return Decision::kContinue;
  bracket.update(trial.trial_id, *time, objective_.score(result));
  if (bracket.continue_trial(trial.trial_id)) return Decision::kContinue;
  if (bracket.halves_ == 0) {
    // At the last milestone with stop_last_trials. Ray pauses the trial until
    // the rest of the bracket arrives and then stops it; it stops either way,
    // so stop it now and spare the checkpoint and the wait.
    reasons_.set(trial.trial_id, finished(bracket));
    remove(trial.trial_id);
    return Decision::kStop;
  }

  const Decision action = process(bracket, trial.trial_id);
  if (action == Decision::kPause) states_.set(trial.trial_id, TrialStatus::kPaused);
  if (action == Decision::kStop) remove(trial.trial_id);
  return action;
}

int64_t HyperBandScheduler::continues_through(const TrialView& trial, int64_t iteration) const {
  if (options_.time_attr != "training_iteration") return iteration;
  auto it = trial_bracket_.find(trial.trial_id);
  if (it == trial_bracket_.end() || !brackets_[it->second].has(trial.trial_id)) return iteration;
  return std::max(iteration, brackets_[it->second].continues_through());
}

std::string HyperBandScheduler::label(const Bracket& bracket) const {
  return fmt::format("HyperBand (band {}, bracket s={})", bracket.band_, bracket.s_);
}

std::string HyperBandScheduler::finished(const Bracket& bracket) const {
  return fmt::format("{}: finished at its last milestone {:g}", label(bracket), bracket.cumul_r_);
}

Decision HyperBandScheduler::process(Bracket& bracket, const std::string& current, bool force) {
  Decision action = Decision::kPause;
  if (!bracket.cur_iter_done()) return action;
  // Not before all n0 trials have come (unless forced: none will come now).
  if (!force && !bracket.ever_filled()) return action;
  auto stop_other = [&](const std::string& id) {
    if (id == current) return;
    // Only trials that are not running can be ended by the controller; the
    // scheduler never leaves another trial running past a milestone. One the
    // controller is still pausing is handed out again until it is removed.
    to_stop_.push_back(id);
    trial_bracket_.erase(id);
    bracket.cleanup(id);
    states_.forget(id);
  };
  if (bracket.finished()) {
    for (const std::string& id : bracket.live_ids()) {
      reasons_.set(id, finished(bracket));
      if (states_.status(id) == TrialStatus::kPaused) stop_other(id);
    }
    return Decision::kStop;
  }
  const double milestone = bracket.cumul_r_;
  std::map<std::string, std::pair<size_t, double>> rank;
  auto [good, bad] = bracket.successive_halving(&rank);
  num_stopped_ += static_cast<int64_t>(bad.size());
  const double sign = objective_.sign();
  for (const std::string& id : bad) {
    const auto [place, score] = rank[id];
    reasons_.set(id, fmt::format("{} at milestone {:g}: {} {} ranked {} of {}, and only the "
                                 "best {} go on",
                                 label(bracket), milestone, objective_.metric(),
                                 std::isfinite(score) ? fmt::format("{:.6g}", sign * score)
                                                      : std::string("(none)"),
                                 place, rank.size(), good.size()));
    if (id == current) {
      bracket.cleanup(id);
      action = Decision::kStop;
    } else {
      stop_other(id);
    }
  }
  for (const std::string& id : good) {
    if (bracket.continue_trial(id)) {
      if (id == current) {
        action = Decision::kContinue;
      } else if (states_.status(id) == TrialStatus::kPaused) {
        bracket.to_unpause_.insert(id);
      }
    } else if (bracket.finished()) {
      reasons_.set(id, finished(bracket));
      if (id == current) {
        bracket.cleanup(id);
        action = Decision::kStop;
      } else if (states_.status(id) == TrialStatus::kPaused) {
        stop_other(id);
      }
    }
  }
  return action;
}

void HyperBandScheduler::remove(const std::string& trial_id) {
  std::erase(to_stop_, trial_id);
  states_.forget(trial_id);
  auto it = trial_bracket_.find(trial_id);
  if (it == trial_bracket_.end()) return;
  Bracket& bracket = brackets_[it->second];
  changed_.insert(it->second);
  trial_bracket_.erase(it);
  bracket.cleanup(trial_id);
  // A trial leaving can complete a milestone the others wait at. (Ray skips
  // this once a bracket was ever processed or is finished, which can leave
  // trials paused for good.)
  if (!bracket.live_ids().empty()) process(bracket, "");
}

void HyperBandScheduler::on_trial_complete(const TrialView& trial, const Json*) {
  on_trial_remove(trial);
}
void HyperBandScheduler::on_trial_error(const TrialView& trial) { on_trial_remove(trial); }
void HyperBandScheduler::on_trial_remove(const TrialView& trial) {
  remove(trial.trial_id);
  reasons_.forget(trial.trial_id);
}

std::string HyperBandScheduler::decision_reason(const std::string& trial_id) const {
  return reasons_.get(trial_id);
}

int HyperBandScheduler::choose_trial_to_run(const std::vector<TrialView>& candidates) {
  int chosen = choose(candidates);
  const bool any_pending =
      std::any_of(candidates.begin(), candidates.end(),
                  [](const TrialView& t) { return t.status == TrialStatus::kPending; });
  if (chosen < 0 && !any_pending) {
    // No new trial is coming now: brackets waiting to fill halve as they
    // are, once the controller has paused every one of their trials (one
    // still pausing would miss being stopped).
    std::set<std::string> paused;
    for (const TrialView& t : candidates) {
      if (t.status == TrialStatus::kPaused) paused.insert(t.trial_id);
    }
    for (size_t b = 0; b < brackets_.size(); ++b) {
      const auto live = brackets_[b].live_ids();
      if (brackets_[b].ever_filled() || live.empty()) continue;
      if (std::all_of(live.begin(), live.end(),
                      [&](const auto& id) { return paused.contains(id); })) {
        changed_.insert(b);
        process(brackets_[b], "", true);
      }
    }
    chosen = choose(candidates);
  }
  if (chosen >= 0) states_.set(candidates[chosen].trial_id, TrialStatus::kRunning);
  return chosen;
}

int HyperBandScheduler::choose(const std::vector<TrialView>& candidates) {
  std::map<std::string, int> index;
  for (size_t i = 0; i < candidates.size(); ++i) index[candidates[i].trial_id] = int(i);
  int chosen = -1;
  // Ray: band by band, least complete bracket first (or in creation order,
  // HyperBandForBOHB's), trials in bracket order.
  for (size_t band = 0; band < bands_.size() && chosen < 0; ++band) {
    std::vector<const Bracket*> order;
    for (int64_t b : bands_[band]) {
      if (b >= 0) order.push_back(&brackets_[b]);
    }
    if (!options_.for_bohb) {
      std::stable_sort(order.begin(), order.end(), [](const Bracket* a, const Bracket* b) {
        return a->completion_percentage() < b->completion_percentage();
      });
    }
    for (const Bracket* bracket : order) {
      for (const std::string& id : bracket->live_ids()) {
        auto i = index.find(id);
        if (i == index.end()) continue;
        const TrialStatus status = candidates[i->second].status;
        if (status == TrialStatus::kPending ||
            (status == TrialStatus::kPaused && bracket->to_unpause_.contains(id))) {
          chosen = i->second;
          break;
        }
      }
      if (chosen >= 0) break;
    }
  }
  // Trials this scheduler never saw (a restored experiment) run last, FIFO;
  // losers waiting to be ended never do.
  for (size_t i = 0; chosen < 0 && i < candidates.size(); ++i) {
    const std::string& id = candidates[i].trial_id;
    if (!trial_bracket_.contains(id) &&
        std::find(to_stop_.begin(), to_stop_.end(), id) == to_stop_.end()) {
      chosen = static_cast<int>(i);
    }
  }
  return chosen;
}

std::vector<std::string> HyperBandScheduler::take_trials_to_stop() { return to_stop_; }

std::vector<HyperBandScheduler::BracketInfo> HyperBandScheduler::brackets() const {
  std::vector<BracketInfo> out;
  for (const Bracket& b : brackets_) {
    out.push_back({b.band_, b.s_, b.n0_, b.r0_, b.cumul_r_, b.live_ids().size()});
  }
  return out;
}

std::vector<SchedulerState::HyperBandBracket> HyperBandScheduler::saved_brackets(
    const Json& state, double sign, const HyperBandOptions& options) {
  std::vector<SchedulerState::HyperBandBracket> out;
  for (const Json& b : state.at("brackets")) {
    SchedulerState::HyperBandBracket& bracket = out.emplace_back();
    bracket.band = b.at("band").get<int64_t>();
    bracket.s = b.at("s").get<int64_t>();
    bracket.n = b.at("n").get<int64_t>();
    bracket.milestone = b.at("cumul_r").get<double>();
    bracket.halvings = b.at("halves").get<int64_t>();
    bracket.n0 = b.at("n0").get<int64_t>();
    bracket.trials = b.at("all").get<std::vector<std::string>>();
    // As successive_halving moves it: r0, then r * eta capped at max_t, s times.
    double r = b.at("r0").get<double>();
    bracket.milestones.push_back(r);
    for (int64_t k = 0; k < bracket.s; ++k) {
      r = std::trunc(std::min(r * options.reduction_factor, options.max_t));
      bracket.milestones.push_back(r);
    }
    for (const Json& l : b.at("live")) {  // as Bracket::save writes a Live
      const double score = double_from_json(l.at(3));
      std::optional<double> value;
      // A result without the metric scores -infinity (Live::score).
      if (l.at(1).get<bool>() && score != -std::numeric_limits<double>::infinity()) {
        value = sign * score;
      }
      bracket.live.push_back({l.at(0).get<std::string>(), l.at(2).get<double>(), value});
    }
  }
  return out;
}

StateParts HyperBandScheduler::save_parts() {
  StateParts out{.head = save_head(false), .complete = parts_complete_};
  // The chunk the last save left partial onwards, and those changed since.
  std::set<size_t> chunks;
  for (size_t b : changed_) chunks.insert(b / kStateChunk);
  for (size_t b = out.complete ? 0 : parts_saved_; b < brackets_.size(); b += kStateChunk) {
    chunks.insert(b / kStateChunk);
  }
  for (size_t chunk : chunks) {
    Json items = Json::array();
    for (size_t b = chunk * kStateChunk; b < std::min((chunk + 1) * kStateChunk, brackets_.size());
         ++b) {
      items.push_back(brackets_[b].save());
    }
    out.chunks.push_back({"/brackets", static_cast<int64_t>(chunk), std::move(items)});
  }
  changed_.clear();
  parts_saved_ = brackets_.size();
  parts_complete_ = false;
  return out;
}

Json HyperBandScheduler::save() const { return save_head(true); }

Json HyperBandScheduler::save_head(bool with_brackets) const {
  Json brackets = Json::array();
  for (size_t b = 0; with_brackets && b < brackets_.size(); ++b) {
    brackets.push_back(brackets_[b].save());
  }
  return {{"brackets", brackets},
          {"bands", bands_},
          {"current_bracket", current_bracket_},
          {"trial_bracket", trial_bracket_},
          {"states", states_.save()},
          {"to_stop", to_stop_},
          {"num_stopped", num_stopped_}};
}

void HyperBandScheduler::restore(const Json& state) {
  brackets_.clear();
  for (const Json& b : state.at("brackets")) {
    brackets_.push_back(
        Bracket::restore(b, options_.max_t, options_.reduction_factor, options_.stop_last_trials));
  }
  bands_ = state.at("bands").get<std::vector<std::vector<int64_t>>>();
  current_bracket_ = state.at("current_bracket").get<int64_t>();
  trial_bracket_ = state.at("trial_bracket").get<std::map<std::string, size_t>>();
  states_.restore(state.at("states"));
  to_stop_ = state.at("to_stop").get<std::vector<std::string>>();
  num_stopped_ = state.at("num_stopped").get<int64_t>();
  changed_.clear();
  parts_complete_ = true;
}

std::string HyperBandScheduler::debug_string() const {
  std::string out =
      fmt::format("HyperBand: num_stopped={} total_brackets={}", num_stopped_, brackets_.size());
  for (size_t band = 0; band < bands_.size(); ++band) {
    out += fmt::format("; Round #{}:", band);
    for (int64_t idx : bands_[band]) {
      if (idx < 0) continue;
      const Bracket& b = brackets_[idx];
      std::map<std::string, int> counts;
      for (const auto& id : b.all_) ++counts[std::string(to_string(states_.status(id)))];
      std::string statuses;
      for (const auto& [name, n] : counts) {
        statuses += fmt::format("{}{}: {}", statuses.empty() ? "" : ", ", name, n);
      }
      out += fmt::format(" Bracket(Max Size (n)={}, Milestone (r)={:g}, completed={:.1f}%): {{{}}}",
                         b.n_, b.cumul_r_, 100 * b.completion_percentage(), statuses);
    }
  }
  return out;
}

}  // namespace tune::schedulers
