// ModelBasedSearcher: what TPE and GP-BO share. It keeps the trial budget,
// suggests points_to_evaluate first, then random configs until
// n_startup_trials trials have completed, then asks the model (propose()).
// It records every completed trial's value (sign-folded so lower is better)
// and every suggested-but-unfinished trial, which the models treat as
// running (constant liar) so parallel trials do not pile onto one point.
//
// Values: the experiment's metric from the trial's last result; a trial
// that completes without it uses its latest intermediate result (fed by
// on_trial_result), so trials stopped early by a scheduler still count.
// Trials in ERROR are dropped, like Optuna's FAIL state. With several
// objectives (a searcher whose handles_several_objectives() says so), a
// value is every objective's, and a result lacking one counts as lacking
// them all; each value also carries the result's constraint violation.
//
// Time: a suggestion from the model reports its model-fit time
// (Suggestion::model_fit_s): all of propose() (for TPE and MOTPE building
// the Parzen estimators is most of it), unless propose() notes a narrower
// part with note_model_fit() (GP-BO: fitting its hyperparameters and
// posterior, not maximising the acquisition).
//
// Deterministic: suggestion i draws from an Rng seeded by (seed, i); save()
// holds the counter, the history and the model's warm-start state, so
// restore(save()) on a fresh searcher gives the same next suggestions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "search/internal/space_encoding.h"
#include "search/searcher.h"
#include "search/searcher_options.h"

namespace tune::search {

class ModelBasedSearcher : public Searcher {
 public:
  ModelBasedSearcher(const ModelBasedSearcher&) = delete;
  ModelBasedSearcher& operator=(const ModelBasedSearcher&) = delete;

  // Throws ConfigError when `metric` is empty (key "metric") or a point to
  // evaluate does not fit the space (key "points_to_evaluate").
  void set_search_properties(const std::string& metric, Mode mode, const ParamSpace& space) final;
  // Refused (Searcher's default) unless handles_several_objectives().
  void set_objectives(const std::vector<Objective>& objectives, const ParamSpace& space) final;
  // The trials join the history ahead of this searcher's own (index 0: the
  // oldest), so the model starts from them and the random start-up phase
  // shrinks by as many; the best kWarmStartRepeats of them (elite order,
  // core/pareto.h) are suggested again first, before points_to_evaluate.
  // Those repeats say how far the function has moved: once one completes,
  // every prior trial's values are offset by the largest difference, per
  // objective, between this run's value and the earlier run's at a config
  // run in both, so a function that got worse around the old best does not
  // keep the old trials ranked above this run's. The largest, not the mean:
  // stale values are taken pessimistically (benchmarks/warm_start: TPE on
  // Branin, seeds 0..19, median 39.5 trials against 59 with the mean).
  size_t warm_start(const std::vector<PriorTrial>& trials) final;
  static constexpr size_t kWarmStartRepeats = 3;
  Suggestion suggest(const std::string& trial_id) final;
  void on_trial_result(const std::string& trial_id, const Json& result) final;
  void on_trial_complete(const std::string& trial_id, const Json* last_result, bool error) final;
  Json save() const final;
  void restore(const Json& state) final;

  struct Observation {
    uint64_t index = 0;     // suggestion number: the order models weigh by
    std::vector<double> x;  // the encoded config (detail::SpaceEncoding)
    double loss = 0;        // the metric, negated for Mode::kMax
    // Every objective's value, each negated for Mode::kMax; losses[0] == loss.
    std::vector<double> losses;
    // core::constraint_violation of the result; 0: feasible.
    double violation = 0;
    // An earlier experiment's trial (warm_start), not this run's: the
    // function may have changed since.
    bool prior = false;
    // The result's constraint values (core::kConstraintsKey) in order, each
    // <= 0 when satisfied; infinity for one that is not a number. Empty when
    // it reports none.
    std::vector<double> constraints;
  };

  const std::vector<Objective>& objectives() const { return objectives_; }
  // Completed trials with a value, in completion order. Entries already
  // there change only when the prior trials' offset does (see warm_start),
  // and then history_version() changes.
  const std::vector<Observation>& observations() const { return observations_; }
  uint64_t history_version() const { return history_version_; }
  // Suggested trials not yet complete, in suggestion order (loss unused).
  std::vector<Observation> running() const;
  // Every observation's losses, and violations, in observations() order
  // (the form core/pareto.h takes).
  std::vector<std::vector<double>> observed_losses() const;
  std::vector<double> observed_violations() const;

 protected:
  ModelBasedSearcher(std::string name, ModelBasedOptions options);

  // The next point (encoded), once ready_for_model().
  virtual std::vector<double> propose(Rng& rng) = 0;
  // Whether the model ranks trials by several objectives (set_objectives).
  virtual bool handles_several_objectives() const { return false; }
  // Whether propose() may be asked; before, configs are random. By default
  // once n_startup_trials trials have completed.
  virtual bool ready_for_model() const;
  // Every intermediate result with the metric of a trial this searcher
  // suggested (`index`, `x` as in Observation; `loss` sign-folded), and
  // the last result once more at its completion (unless in ERROR): for
  // models that learn from partial results.
  virtual void on_intermediate(uint64_t index, const std::vector<double>& x, double loss,
                               const Json& result) {}
  // The trial ended (TERMINATED, not ERROR), after that last
  // on_intermediate: nothing more comes. For models that tell trials a
  // scheduler stopped early from running ones.
  virtual void on_trial_end(uint64_t index) {}
  // State the model carries from one suggestion to the next (warm starts).
  virtual Json save_model() const { return nullptr; }
  virtual void restore_model(const Json& state) {}

  const detail::SpaceEncoding& encoding() const { return encoding_; }

  // Called from propose(): the seconds this suggestion spent fitting the
  // model, when that is a part of propose() (see the top).
  void note_model_fit(double seconds) { fit_s_ = seconds; }

 private:
  // What a result says of a trial: its losses and constraint violation.
  struct Outcome {
    std::vector<double> losses;
    double violation = 0;
    std::vector<double> constraints;  // as Observation's
  };
  struct Running {
    uint64_t index = 0;
    std::vector<double> x;
    std::optional<Outcome> last;  // from the latest intermediate result
  };

  void start(const ParamSpace& space);
  // Whether `config`'s searched values lie in their domains: `x` is its
  // encoding, which clamps them.
  bool inside_space(const Json& config, const std::vector<double>& x) const;
  std::optional<Outcome> outcome_of(const Json& result) const;
  // After this run's trial observations_.back() completes: when its config
  // is a prior trial's, the prior trials' offset is measured again.
  void update_prior_offset();

  std::string name_;
  ModelBasedOptions options_;
  std::vector<Objective> objectives_;
  detail::SpaceEncoding encoding_;
  uint64_t suggested_ = 0;
  std::vector<Observation> observations_;
  std::map<std::string, Running> running_;
  std::vector<double> prior_offset_;  // per objective, added to the prior trials' values
  uint64_t history_version_ = 0;
  std::optional<double> fit_s_;  // note_model_fit()'s, for the current suggestion
};

}  // namespace tune::search
