// HyperBand (Li et al., JMLR 2018), synchronous, as Ray Tune's
// HyperBandScheduler after ray-project/ray#39157 (r = min(r * eta, max_t)),
// and with for_bohb as Ray's HyperBandForBOHB (see below).
//
// Trials fill brackets in creation order. A band holds s_max + 1 brackets,
// s_max + 1 = round(log(max_t) / log(eta)) + 1; bracket s takes
// n0(s) = ceil((s_max + 1) / (s + 1) * eta^s) trials (Ray's counts its live
// trials, which a searcher creating one trial at a time keeps refilling),
// runs each to milestone
// r0(s) = int(max_t * eta^-s), then keeps the best ceil(n / eta) and
// multiplies the milestone by eta (capped at max_t), s times. For max_t=81,
// eta=3: brackets of 5, 8, 15, 34, 81 trials with first milestones 81, 27,
// 9, 3, 1.
//
// for_bohb, as Ray's HyperBandForBOHB and BOHB (Falkner et al., ICML 2018,
// which runs brackets s = s_max, ..., 0): a band opens its largest bracket
// first (81 trials from milestone 1, then 34 from 3, 15 from 9, 8 from 27,
// 5 at 81), and choose_trial_to_run serves brackets in that order rather
// than the least complete first, so BOHB's model gets the lowest budget's
// results first and a bracket's higher budgets before the next bracket
// fills. Where it departs from Ray's HyperBandForBOHB:
// - a bracket takes n0 trials in all, as below (Ray's counts live trials);
// - a trial at the last milestone stops at once (Ray's pauses it until its
//   bracket is done, then stops it: the same iterations run);
// - an unfilled bracket halves as it is once no trial waits to start and
//   all its trials are paused (Ray's: once no trial at all is running);
// - Ray's tells the searcher of each pause and resume itself; here the
//   controller tells every searcher (Searcher::on_trial_pause), and a
//   ConcurrencyLimiter counts only trials not paused against
//   max_concurrent, as TuneBOHB does, so a bracket larger than
//   max_concurrent still fills.
//
// A trial that reaches its bracket's milestone pauses (kPause) until all n0
// trials of the bracket came and every live one has (or, when no trial waits
// to start, until the controller has paused them all); the last one
// triggers the halving: it
// continues or stops itself, the paused winners become runnable through
// choose_trial_to_run, and the paused losers are handed to the controller by
// take_trials_to_stop() (again each turn until the controller has removed
// them: a loser may still be pausing). At the last milestone trials stop
// (stop_last_trials).
//
// Expects: the controller resumes a paused trial from its checkpoint with
// its iteration count (a trial restarting from iteration 0 would never reach
// its milestone again before the others).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "schedulers/internal/decision_reasons.h"
#include "schedulers/internal/objective.h"
#include "schedulers/internal/trial_states.h"
#include "schedulers/scheduler_options.h"
#include "schedulers/scheduler_state.h"
#include "schedulers/trial_scheduler.h"

namespace tune::schedulers {

class HyperBandScheduler final : public TrialScheduler {
 public:
  // Brackets per chunk of save_parts().
  static constexpr size_t kStateChunk = 64;

  // Throws ConfigError: max_t > 0, reduction_factor > 1.
  explicit HyperBandScheduler(HyperBandOptions options);
  ~HyperBandScheduler() override;
  HyperBandScheduler(HyperBandScheduler&&) noexcept;  // movable; the bracket type is private
  HyperBandScheduler& operator=(HyperBandScheduler&&) noexcept;

  void set_search_properties(const std::string& metric, Mode mode) override;
  void on_trial_add(const TrialView& trial) override;
  Decision on_trial_result(const TrialView& trial, const Json& result) override;
  void on_trial_complete(const TrialView& trial, const Json* last_result) override;
  void on_trial_error(const TrialView& trial) override;
  void on_trial_remove(const TrialView& trial) override;
  int choose_trial_to_run(const std::vector<TrialView>& candidates) override;
  std::vector<std::string> take_trials_to_stop() override;
  std::string decision_reason(const std::string& trial_id) const override;
  // With time_attr = training_iteration: through the iteration before the
  // trial's bracket's milestone.
  int64_t continues_through(const TrialView& trial, int64_t iteration) const override;
  Json save() const override;
  // The brackets in chunks of kStateChunk: a save writes the chunks whose
  // brackets changed or were opened since the last one.
  StateParts save_parts() override;
  void restore(const Json& state) override;
  std::string debug_string() const override;
  std::string kind() const override { return "hyperband"; }

  // For tests and status: brackets in the order they opened, each as (band, s,
  // max trials n0, first milestone r0, current milestone, live trials).
  struct BracketInfo {
    size_t band;
    int64_t s;
    int64_t n0;
    int64_t r0;
    double milestone;
    size_t live;
  };
  std::vector<BracketInfo> brackets() const;

  // What a state save() wrote shows (schedulers/scheduler_state.h), its
  // scores times `sign` (the objective's, to give the metric's values), for
  // the scheduler `options` make. Throws Json's errors for another layout.
  static std::vector<SchedulerState::HyperBandBracket> saved_brackets(
      const Json& state, double sign, const HyperBandOptions& options);

 private:
  class Bracket;

  int64_t n0(int64_t s) const;
  int64_t r0(int64_t s) const;
  // Ray's _process_bracket; `current` is the reporting trial, or empty.
  // `force`: halve a bracket that did not take all its n0 trials.
  Decision process(Bracket& bracket, const std::string& current, bool force = false);
  int choose(const std::vector<TrialView>& candidates);
  void remove(const std::string& trial_id);
  std::string label(const Bracket& bracket) const;     // "HyperBand (band 0, bracket s=2)"
  std::string finished(const Bracket& bracket) const;  // the reason at its last milestone
  // save(); `with_brackets` false: "brackets" left empty (save_parts).
  Json save_head(bool with_brackets) const;

  HyperBandOptions options_;
  detail::Objective objective_;
  int64_t s_max_1_;
  std::vector<Bracket> brackets_;
  std::vector<std::vector<int64_t>> bands_;      // bracket indices; -1: skipped (r0 == 0)
  int64_t current_bracket_ = -1;                 // Ray's _state["bracket"]
  std::map<std::string, size_t> trial_bracket_;  // Ray's _trial_info
  detail::TrialStates states_;
  std::vector<std::string> to_stop_;
  int64_t num_stopped_ = 0;
  detail::DecisionReasons reasons_;
  // For save_parts(): the brackets changed since its last call, how many
  // there were then, and whether the next call gives every chunk (the
  // first one, and the first after restore).
  std::set<size_t> changed_;
  size_t parts_saved_ = 0;
  bool parts_complete_ = true;
};

// The scheduler `options` describe: a HyperBandScheduler, or with
// options.asynchronous an AshaScheduler over HyperBand's brackets
// (asynchronous_hyperband). Throws ConfigError as HyperBandScheduler does.
std::unique_ptr<TrialScheduler> make_hyperband_scheduler(HyperBandOptions options);

// ASHA's options for asynchronous HyperBand: one bracket per HyperBand
// bracket (those whose first milestone int(max_t * eta^-s) is at least 1),
// grace_period = the smallest of those milestones, reduction_factor = eta;
// time_attr, metric, mode, max_t, stop_last_trials and seed carried over.
// Rungs are then grace * eta^k, which equal HyperBand's milestones when
// max_t is a power of eta. Throws ConfigError as HyperBandScheduler does.
AshaOptions asynchronous_hyperband(const HyperBandOptions& options);

}  // namespace tune::schedulers
