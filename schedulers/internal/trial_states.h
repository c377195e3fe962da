// A scheduler's own record of where each live trial stands, kept from the
// hooks alone: PENDING from on_trial_add until it runs, RUNNING once chosen
// or reporting, PAUSED after the scheduler paused it; forgotten when it
// completes, fails or is removed. Ray's schedulers ask the trial runner
// instead ("are other trials waiting?"); ours see only the hooks.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/types.h"

namespace tune::schedulers::detail {

class TrialStates {
 public:
  void set(const std::string& trial_id, TrialStatus status) { states_[trial_id] = status; }
  void forget(const std::string& trial_id) { states_.erase(trial_id); }
  bool knows(const std::string& trial_id) const { return states_.contains(trial_id); }
  TrialStatus status(const std::string& trial_id) const;  // kTerminated when unknown

  // Whether a trial other than `trial_id` is PENDING or PAUSED.
  bool others_waiting(const std::string& trial_id) const;
  int count(TrialStatus status) const;
  std::vector<std::string> with(TrialStatus status) const;  // in id order

  Json save() const;
  void restore(const Json& state);

 private:
  std::map<std::string, TrialStatus> states_;
};

}  // namespace tune::schedulers::detail
