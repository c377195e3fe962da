// Callback: hooks the C++ API calls as trials progress, modelled on Ray
// Tune's Callback. Pass them in RunConfig::callbacks (or
// ControllerOptions::callbacks).
//
// Every hook runs on the controller's event loop thread, in the driver
// process, synchronously: a slow hook delays every trial's next decision.
// An exception thrown by a hook propagates out of Tuner::fit() (the
// experiment stays restorable). Hooks per trial, in order:
//   on_trial_start     each time the trial's workers are launched: its first
//                      start, and again on every restart (after a PAUSE, a
//                      failure within max_failures, or a restore)
//   on_trial_result    each completed iteration, after it is stored
//   on_trial_complete  once, when the trial ends TERMINATED (it finished,
//                      a scheduler or stopper stopped it, or the experiment
//                      was stopped)
//   on_trial_error     once, when the trial ends in ERROR (failures that are
//                      retried under max_failures call none of these)
#pragma once

#include <string>

#include "core/config.h"

namespace tune {

class Callback {
 public:
  virtual ~Callback() = default;
  virtual void on_trial_start(const std::string& trial_id, const Json& config) {}
  // `result`: the user's metrics plus training_iteration, time_this_iter_s,
  // time_total_s, timestamp and trial_id.
  virtual void on_trial_result(const std::string& trial_id, const Json& config,
                               const Json& result) {}
  // `last_result` is null when the trial reported nothing.
  virtual void on_trial_complete(const std::string& trial_id, const Json& config,
                                 const Json& last_result) {}
  virtual void on_trial_error(const std::string& trial_id, const Json& config,
                              const std::string& error) {}
};

}  // namespace tune
