// TrialHooks: what the plug-ins, the callbacks (tune/callback.h) and the run
// log hear of a trial's life: a run started, a result, a pause, an end. Only
// what they are told; their answers that decide something (the scheduler's
// decisions and picks, the searcher's suggestions) are asked where they are
// needed.
//
// Owned by TrialRuns; not thread-safe. Exceptions from callbacks and
// plug-ins propagate: the experiment cannot go on.
#pragma once

#include <string>

#include "tune/execution/trial.h"
#include "tune/execution/trial_parts.h"

namespace tune {

class TrialHooks {
 public:
  explicit TrialHooks(const TrialParts& parts);

  // A PAUSED trial is about to run again (the searcher's on_trial_unpause).
  void unpausing(const Trial& trial);
  // Its run started on a group of `source`: the log line and on_trial_start.
  void started(const Trial& trial, GroupSource source);
  // Its last_result is new: the searcher and the callbacks see it.
  void result(const Trial& trial);
  // Its run ended PAUSED, for `reason`.
  void paused(const Trial& trial, const std::string& reason);
  // It reached TERMINATED or ERROR at the end of a run; nothing for other phases.
  void ended(const Trial& trial);
  // A PENDING or PAUSED trial ended TERMINATED without running again.
  void ended_waiting(const Trial& trial, const std::string& reason);

 private:
  TrialParts parts_;
};

}  // namespace tune
