// ASHA: asynchronous successive halving (Li et al., "A System for Massively
// Parallel Hyperparameter Tuning", arXiv:1810.05934), as Ray Tune's
// AsyncHyperBandScheduler, in two variants.
//
// Stopping (Ray's, the default): rungs at grace_period * rf^k (k >= s for
// bracket s) up to max_t. The first result of a trial at or past a rung is
// compared with the rung's cut-off, the (1 - 1/rf) quantile of the values
// recorded there before (np.nanpercentile, linear); below it -> kStop. The
// value is then recorded. At max_t a trial stops when stop_last_trials.
//
// Promotion (`promotion = true`, the paper's original rule, which Ray does
// not offer): a trial reaching a rung is recorded there and pauses (kPause)
// unless it is already promotable. A trial is promotable from rung k while it
// is among the top floor(n_k / rf) of the n_k trials recorded at rung k.
// choose_trial_to_run resumes promotable paused trials first, from the
// highest rung down and best first, then starts pending ones. Once no trial
// runs or waits to start and none is promotable, the remaining paused trials
// have lost: take_trials_to_stop() hands them to the controller to end, and
// again each turn until they are removed (the last one paused may still be
// writing its checkpoint, and the controller ends only PAUSED trials).
// Unlike the stopping rule, no trial is ever judged on a rung with few
// entries, at the price of a checkpoint, pause and resume per promotion.
//
// Metric and mode default to the experiment's (set_search_properties).
// Results lacking time_attr or the metric are ignored (kContinue), as in Ray.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "schedulers/internal/decision_reasons.h"
#include "schedulers/internal/objective.h"
#include "schedulers/internal/trial_states.h"
#include "schedulers/scheduler_options.h"
#include "schedulers/scheduler_state.h"
#include "schedulers/trial_scheduler.h"
#include "search/domain.h"

namespace tune::schedulers {

class AshaScheduler final : public TrialScheduler {
 public:
  // Values per chunk of a rung in save_parts().
  static constexpr size_t kStateChunk = 1024;

  // Throws ConfigError naming the option when a value is out of range
  // (Ray's asserts: max_t > 0, 0 < grace_period <= max_t, rf > 1, brackets > 0).
  // `kind`: "hyperband" for the asynchronous HyperBand made of it.
  explicit AshaScheduler(AshaOptions options, std::string kind = "asha");
  ~AshaScheduler() override;
  AshaScheduler(AshaScheduler&&) noexcept;  // movable; the bracket type is private
  AshaScheduler& operator=(AshaScheduler&&) noexcept;

  void set_search_properties(const std::string& metric, Mode mode) override;
  void on_trial_add(const TrialView& trial) override;
  Decision on_trial_result(const TrialView& trial, const Json& result) override;
  void on_trial_complete(const TrialView& trial, const Json* last_result) override;
  void on_trial_error(const TrialView& trial) override;
  void on_trial_remove(const TrialView& trial) override;
  int choose_trial_to_run(const std::vector<TrialView>& candidates) override;
  std::vector<std::string> take_trials_to_stop() override;
  std::string decision_reason(const std::string& trial_id) const override;
  // Up to the trial's next rung (or max_t) when time_attr is
  // training_iteration: ASHA decides only there.
  int64_t continues_through(const TrialView& trial, int64_t iteration) const override;
  // Without promotion it only stops trials, and runs pending ones as FIFO.
  bool chooses_ahead() const override { return !options_.promotion; }
  // Promotion pauses trials at rungs; otherwise ASHA only stops them.
  bool pauses_trials() const override { return options_.promotion; }
  Json save() const override;
  // The rungs' values in chunks of kStateChunk: a save writes the chunks
  // that grew since the last one, whatever the number of trials.
  StateParts save_parts() override;
  void restore(const Json& state) override;
  std::string debug_string() const override;
  std::string kind() const override { return kind_; }

  // Rung milestones of bracket `b`, highest first (for tests and status).
  std::vector<double> milestones(size_t b = 0) const;

  // What a state save() wrote shows (schedulers/scheduler_state.h), its
  // scores times `sign` (the objective's, to give the metric's values) and
  // cut-offs at `reduction_factor`'s quantile. Throws Json's errors for
  // another layout.
  static std::vector<SchedulerState::AshaBracket> saved_brackets(const Json& state,
                                                                 double reduction_factor,
                                                                 double sign);

 private:
  class Bracket;
  struct Place {  // where a paused trial waits for promotion
    size_t bracket;
    size_t rung;
  };

  // save(); `with_values` false: the rungs' recorded left empty (save_parts).
  Json save_head(bool with_values) const;
  void forget(const std::string& trial_id);
  std::string name() const;  // as debug_string() begins
  bool promotable(const std::string& trial_id, const Place& place) const;
  // The best promotable paused trial, highest rung first; `above` limits the
  // search to rungs with a milestone above it.
  std::optional<std::string> best_promotable(double above = -1) const;

  AshaOptions options_;
  std::string kind_;
  detail::Objective objective_;
  std::vector<Bracket> brackets_;
  std::map<std::string, size_t> trial_bracket_;  // Ray's _trial_info
  std::map<std::string, Place> paused_at_;       // promotion: paused trials
  std::vector<std::string> to_stop_;             // promotion: handed out, not yet removed
  detail::TrialStates states_;
  int64_t num_stopped_ = 0;
  detail::DecisionReasons reasons_;
  Rng rng_;
  // Per bracket, per rung: the values save_parts() has given; empty until
  // its first call and after restore (the next one gives every chunk).
  std::vector<std::vector<size_t>> parts_saved_;
};

}  // namespace tune::schedulers
