// Stoppers: end trials (or the whole experiment) when a condition on their
// results holds, independent of the scheduler. Modelled on Ray Tune's Stopper.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"

namespace tune {

class Stopper {
 public:
  virtual ~Stopper() = default;
  // Called after each complete iteration; true stops that trial (TERMINATED).
  // `result` holds the user's metrics and the auto-filled fields.
  virtual bool should_stop_trial(const std::string& trial_id, const Json& result) = 0;
  // True stops every trial and ends the experiment.
  virtual bool stop_all() { return false; }
  // Why the last should_stop_trial returned true, for the trial's status reason.
  virtual std::string reason() const = 0;
  // The last iteration through which should_stop_trial is sure to return
  // false for `trial_id`, which just reported `iteration` and goes on (its
  // ranks then report without waiting for decisions: TrialScheduler's
  // continues_through). The default, `iteration`: any result may stop it.
  virtual int64_t continues_through(const std::string& trial_id, int64_t iteration) const {
    return iteration;
  }
};

// One line of a [stop] table: a trial stops once result[key] >= threshold
// (Ray's semantics for a stop dict), or <= with Comparison::kAtMost (a
// sweep file writes `loss = { at_most = 0.01 }`).
struct StopCriterion {
  enum class Comparison { kAtLeast, kAtMost };
  std::string key;
  double threshold = 0;
  Comparison comparison = Comparison::kAtLeast;
};

// Stops a trial when any criterion holds. Results lacking a key, or with a
// non-numeric value for it, never meet that criterion.
class CriteriaStopper final : public Stopper {
 public:
  explicit CriteriaStopper(std::vector<StopCriterion> criteria) : criteria_(std::move(criteria)) {}
  bool should_stop_trial(const std::string& trial_id, const Json& result) override;
  std::string reason() const override { return reason_; }
  // Known ahead only when every criterion is training_iteration >= N.
  int64_t continues_through(const std::string& trial_id, int64_t iteration) const override;

 private:
  std::vector<StopCriterion> criteria_;
  std::string reason_;
};

}  // namespace tune
