// RunEnds: how the runs of trials end. It applies a result's action (a
// stop or pause the ranks were told, or a failure), fails runs (a rank's
// ERROR, a bad exit, a missed heartbeat, a broken protocol), concludes a run
// once its group is gone (judge_end, tune/execution/decide.h: TERMINATED, PAUSED,
// retried or ERROR) and starts the trial its ranks were handed ahead
// (tune/execution/hand_ahead.h); it applies PBT's exploits to paused trials, and
// winds the experiment down on an interrupt or a stopper's stop_all
// (tune/execution/wind_down.h).
//
// Faults of one trial stay in it: a checkpoint that cannot be cloned fails
// that trial (retried under max_failures). StorageError and exceptions from
// callbacks propagate.
//
// Owned by TrialRuns; not thread-safe.
#pragma once

#include <string>

#include "tune/execution/decide.h"
#include "tune/execution/hand_ahead.h"
#include "tune/execution/run_start.h"
#include "tune/execution/trial_hooks.h"
#include "tune/execution/trial_parts.h"
#include "tune/execution/wind_down.h"

namespace tune {

class RunEnds {
 public:
  RunEnds(const TrialParts& parts, WindDown& wind_down, TrialHooks& hooks, RunStart& start,
          HandAhead& hand_ahead);

  // The action decide() took on a result, once the ranks were told.
  void apply(Trial& trial, const Action& action);
  // Starts tearing the group down. `from_worker`: the error is a rank's own
  // ERROR message, which says more than an exit status and replaces one.
  void fail(Trial& trial, const std::string& error, bool from_worker);
  void on_group_event(const GroupEvent& event);
  // Concludes the run once its ranks have all exited and its outcome is
  // known; else lets the group settle for a DONE or ERROR still in flight.
  void maybe_conclude(Trial& trial);
  // Ends the run of `trial`. `keep_ranks`: every rank said DONE and stays
  // alive for the next trial (reuse_workers); else the group is killed.
  void conclude(Trial& trial, bool keep_ranks);

  // The paused `trial` takes the donor's latest checkpoint, iteration count
  // and an explored config; it resumes from there when next started.
  void apply_exploit(Trial& trial, const schedulers::Exploit& exploit);
  // Ends the waiting trials the scheduler gave up on (HyperBand's losers).
  void stop_waiting_trials();

  // Stops launching; trials that have checkpointed pause at their next
  // report, the others are killed; after interrupt_grace_s the rest are
  // killed too (check_interrupt_deadline). Everything stays resumable.
  void interrupt(const std::string& reason);
  void check_interrupt_deadline(Clock::time_point now);
  void kill_all_running();
  // A stopper's stop_all(): no trial is created or started any more;
  // waiting trials end TERMINATED now, running ones at their next report.
  void check_stop_all();

 private:
  void on_rank_exit(Trial& trial, int rank, const ExitStatus& status);
  bool awaits_node_verdict(const Trial& trial) const;
  bool blame_node(Trial& trial);
  void run_handed_over(Trial& trial, const std::string& from, const std::string& stop_reason);
  void notify_end(Trial& trial);
  void end_waiting_trial(Trial& trial, const std::string& reason);
  void fail_waiting(Trial& trial, const std::string& error);
  // A trial that fails without limit (max_failures = -1) restarts after
  // restart_backoff_s (tune/execution/decide.h): sets its restart_after.
  void back_off(Trial& trial);
  void kill_for_interrupt(Trial& trial);

  TrialParts parts_;
  WindDown& wind_down_;
  TrialHooks& hooks_;
  RunStart& start_;
  HandAhead& hand_ahead_;
};

}  // namespace tune
