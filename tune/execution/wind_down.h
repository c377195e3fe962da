// WindDown: whether the experiment is ending early, and why. An interrupt (a
// signal, or fail_fast after a trial's ERROR) pauses running trials at their
// next report where they have a checkpoint and kills the others, and the
// rest once its grace time is over; everything stays resumable. A stopper's
// stop_all() ends every trial: waiting ones at once, running ones at their
// next report, and no trial is created any more. This class holds that state
// alone; RunEnds (tune/execution/run_ends.h) acts on the trials.
//
// Owned by TrialRuns; not thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tune/stopper.h"
#include "tune/system/clock.h"

namespace tune {

class WindDown {
 public:
  // Begins an interrupt whose grace ends at `deadline`; false, changing
  // nothing, when one began already.
  bool interrupt(std::string reason, Clock::time_point deadline);
  // True once: the first time `now` is past the interrupt's grace deadline.
  bool grace_expired(Clock::time_point now);
  // Asks the stoppers in order whether to stop all, until one says so (its
  // reason is the stop_all's); none is asked once one did. True when this
  // call began the stop_all.
  bool check_stop_all(const std::vector<std::shared_ptr<Stopper>>& stoppers);

  bool interrupted() const { return interrupted_; }
  const std::string& interrupt_reason() const { return interrupt_reason_; }
  // Set once a stopper said stop_all.
  const std::optional<std::string>& stop_all_reason() const { return stop_all_reason_; }
  bool winding_down() const { return interrupted_ || stop_all_reason_.has_value(); }

 private:
  bool interrupted_ = false;
  std::string interrupt_reason_;
  std::optional<Clock::time_point> grace_deadline_;  // reset once expired
  std::optional<std::string> stop_all_reason_;
};

}  // namespace tune
