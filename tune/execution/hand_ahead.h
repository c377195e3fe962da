// HandAhead: trials handed ahead to the ranks of running trials. With reused
// one-rank groups and a scheduler whose pick cannot change
// (TrialScheduler::chooses_ahead), the trial to run next is handed to a
// running trial's rank: it gets that trial's START at once, holds it while
// its own trial runs, and starts it the moment that one returns, so no
// round trip to the controller lies between two trials. The handed trial
// stays PENDING, held for those ranks (no other group may run it), until
// the controller hears their DONE: it then runs there (take(), then
// RunStart::begin_handed_over), or, when their trial ended otherwise
// (failed, interrupted), it waits again for any group. A group of several
// ranks is never handed a trial: one rank finishing first would start it
// alone.
//
// Owned by TrialRuns; not thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tune/execution/run_start.h"
#include "tune/execution/trial_parts.h"

namespace tune {

class HandAhead {
 public:
  HandAhead(const TrialParts& parts, RunStart& start);

  // PENDING and PAUSED trials that no group holds a START for, in creation
  // order, but for those backing off after a failure (Trial::restart_after).
  std::vector<Trial*> waiting();
  // Hands the trial the scheduler picks next to each running one-rank group
  // that holds none yet. Call it only while the experiment does not wind down.
  void hand_out();
  // Whether the ranks of running trial `running_id` hold another trial's START.
  bool ranks_hold_next(const std::string& running_id) const {
    return next_of_.contains(running_id);
  }
  // A stop of trial `trial_id` (why), decided while it is held: it stops
  // where its ranks start it. False when it is not held.
  bool stop_when_started(const std::string& trial_id, std::string reason);

  // The trial handed to the ranks of `running_id`, whose run ends now.
  struct Next {
    Trial* trial = nullptr;   // null: none, or given back to the waiting trials
    int master_port = 0;      // its rendezvous port, in the START its ranks hold
    std::string stop_reason;  // a stop decided while it was held (stop_when_started)
  };
  // With `ranks_go_on` (every rank said DONE, the group may be kept) and the
  // trial still PENDING, it runs on those ranks: returned. Else it waits
  // again for any group, and the group must not be kept (its rank would
  // start it).
  Next take(const std::string& running_id, bool ranks_go_on);

 private:
  struct Held {
    int master_port = 0;
    std::string stop_reason;
  };

  bool on_ = false;  // reused one-rank groups, a scheduler that chooses_ahead
  TrialParts parts_;
  RunStart& start_;
  std::map<std::string, Held> held_;            // by the handed trial's id
  std::map<std::string, std::string> next_of_;  // running trial id -> handed trial id
};

}  // namespace tune
