// Population Based Training (Jaderberg et al., arXiv:1711.09846), as Ray
// Tune's PopulationBasedTraining.
//
// A trial reaches a perturbation point when time_attr >= burn_in_period and
// perturbation_interval has passed since its last one. There its score is
// recorded and the live trials with a score are ranked: the bottom
// quantile_fraction (ceil(n * q), at most floor(n / 2); none when n <= 1)
// exploit, the top ones donate.
//
// Asynchronous (synch = false): a bottom trial gets kPause, and
// take_exploit() then yields a donor drawn at random from the top trials
// that have a checkpoint (checkpoint_iteration > 0 when last seen) and the
// donor's config explored (explore() below, then custom_explore_fn). With no
// such donor it is left alone. Any other trial continues, or pauses to let a
// waiting (PENDING or PAUSED) trial run, as Ray time-multiplexes a
// population larger than the machine.
//
// Synchronous (synch = true): every trial pauses at the perturbation point
// until all live trials have reached it; the last to arrive decides the
// exploits of all the bottom trials, which take_exploit() hands out when the
// controller resumes them (choose_trial_to_run resumes those first, so the
// donors, all paused at the point, have not moved on).
//
// An exploited trial takes over the donor's last perturbation and train
// times, so it is next perturbed an interval after the donor's point.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "schedulers/internal/mutations.h"
#include "schedulers/internal/objective.h"
#include "schedulers/internal/trial_states.h"
#include "schedulers/scheduler_options.h"
#include "schedulers/trial_scheduler.h"

namespace tune::schedulers {

class PbtScheduler : public TrialScheduler {
 public:
  // Throws ConfigError naming the option: perturbation_interval > 0,
  // quantile_fraction in [0, 0.5], resample_probability in [0, 1], at least
  // one perturbation factor, mutations or custom_explore_fn given.
  explicit PbtScheduler(PbtOptions options);

  void set_search_properties(const std::string& metric, Mode mode) override;
  void on_trial_add(const TrialView& trial) override;
  Decision on_trial_result(const TrialView& trial, const Json& result) override;
  void on_trial_complete(const TrialView& trial, const Json* last_result) override;
  void on_trial_error(const TrialView& trial) override;
  void on_trial_remove(const TrialView& trial) override;
  int choose_trial_to_run(const std::vector<TrialView>& candidates) override;
  std::optional<Exploit> take_exploit(const std::string& trial_id) override;
  // With time_attr = training_iteration: through the iteration before the
  // trial's next perturbation point (nothing is decided between two).
  int64_t continues_through(const TrialView& trial, int64_t iteration) const override;
  Json save() const override;
  void restore(const Json& state) override;
  std::string debug_string() const override;
  std::string kind() const override { return "pbt"; }

  // Bottom and top quantiles of the live scored trials, worst first (tests).
  std::pair<std::vector<std::string>, std::vector<std::string>> quantiles() const;

 protected:
  // PB2's entry points. `name` prefixes error messages and debug strings.
  PbtScheduler(PbtOptions options, std::string name, bool explores_itself);

  // A trial reached a perturbation point with `score` (sign folded in).
  virtual void on_perturbation_point(const std::string& trial_id, double time, double score,
                                     const Json& config) {}
  // The config `recipient` restarts with, from the donor's config.
  virtual Json explore(const std::string& recipient, const std::string& donor,
                       const Json& donor_config);
  virtual Json save_extra() const { return Json::object(); }
  virtual void restore_extra(const Json& state) {}

  Rng& rng() { return rng_; }
  const detail::Objective& objective() const { return objective_; }

 private:
  struct TrialState {
    std::optional<double> last_score;
    double last_perturbation_time = 0;
    double last_train_time = 0;
    int64_t checkpoint_iteration = 0;  // as last seen
    Json config;                       // as last seen (donors pass it on)
  };

  TrialState& state_of(const std::string& trial_id, const Json& config);
  void forget(const std::string& trial_id);
  // Decides `trial_id`'s exploit, if it is in `lower` and a donor qualifies.
  void maybe_exploit(const std::string& trial_id, const std::vector<std::string>& lower,
                     const std::vector<std::string>& upper);

  PbtOptions options_;
  std::string name_;
  detail::Objective objective_;
  std::map<std::string, detail::Mutation> mutations_;
  std::vector<std::string> order_;  // trials in the order they were added
  std::map<std::string, TrialState> trials_;
  std::map<std::string, Exploit> exploits_;  // decided, not yet taken
  detail::TrialStates states_;
  double next_perturbation_sync_;
  int64_t num_perturbations_ = 0;
  Rng rng_;
};

}  // namespace tune::schedulers
