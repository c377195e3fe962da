// TrialRuns: the lives of an experiment's trials, between the event loop
// (tune/execution/controller.h) and the parts it drives; the one class of the trial
// side the controller calls. It owns the others, each with one job:
//
//   TrialTable    (trial_table.h)     the trials, and the only writer of their status
//   TrialSupply   (trial_supply.h)    new trials from the searcher; the store's on resume
//   RunStart      (run_start.h)       a trial's run: its group, START, first leases, RUNNING
//   HandAhead     (hand_ahead.h)      trials handed ahead to running trials' ranks
//   TrialReports  (trial_reports.h)   complete iterations: results, and decide() on them
//   RunEnds       (run_ends.h)        actions applied, failures, judge_end(), exploits,
//                                     the interrupt and stop_all acted on
//   WindDown      (wind_down.h)       whether and why the experiment ends early
//   TrialHooks    (trial_hooks.h)     what the plug-ins, callbacks and run log hear
//   ProgressRows  (progress_rows.h)   the progress table's rows
//
// Pure rules live apart: decide() and judge_end() (decide.h), the leases
// (leases.h), the allowed phase changes (trial_phase.h).
//
// Faults of one trial stay in it: a group that cannot start, a checkpoint
// that cannot be published or cloned, a broken rank fail that trial
// (retried under max_failures). StorageError and exceptions from user
// callbacks propagate: the experiment cannot go on.
//
// Owned by the controller's event loop; not thread-safe.
#pragma once

#include <string>

#include "tune/execution/hand_ahead.h"
#include "tune/execution/progress_rows.h"
#include "tune/execution/run_ends.h"
#include "tune/execution/run_start.h"
#include "tune/execution/trial_hooks.h"
#include "tune/execution/trial_parts.h"
#include "tune/execution/trial_reports.h"
#include "tune/execution/trial_supply.h"
#include "tune/execution/wind_down.h"
#include "tune/execution/worker_launch.h"

namespace tune {

class TrialRuns {
 public:
  // `launch`: how its ranks start (the worker and the controller's endpoint).
  TrialRuns(ControllerParts parts, WorkerLaunchContext launch);

  // Rebuilds the trials, the searcher and the scheduler from the store (resume).
  void load() { supply_.load(); }
  // Writes the searcher's and scheduler's state into the open batch: always
  // when `force`, else at most once a second.
  void save_state(bool force) { supply_.save_state(force); }

  void create_trials() { supply_.create_trials(); }
  // Ends the waiting trials the scheduler gave up on, starts the ones it
  // picks while the resource pool and the launcher have room, hands trials
  // ahead, and prestarts spare groups.
  void start_trials();

  void on_message(const std::string& routing_id, const Peer* peer, protocol::Message& message);
  void on_group_event(const GroupEvent& event) { ends_.on_group_event(event); }
  // A rank of `peer`'s trial sent what the protocol forbids: its trial fails.
  void fail_peer(const Peer& peer, const std::string& reason);

  // Stops launching; trials that have checkpointed pause at their next
  // report, the others are killed; after interrupt_grace_s the rest are
  // killed too (check_interrupt_deadline). Everything stays resumable.
  void interrupt(const std::string& reason) { ends_.interrupt(reason); }
  void check_interrupt_deadline(Clock::time_point now) { ends_.check_interrupt_deadline(now); }
  // The earliest of `latest` and the times trials backing off after a
  // failure may restart (Trial::restart_after): the event loop wakes then.
  Clock::time_point next_restart(Clock::time_point latest);
  void kill_all_running() { ends_.kill_all_running(); }
  // A stopper's stop_all(): no trial is created or started any more;
  // waiting trials end TERMINATED now, running ones at their next report.
  void check_stop_all() { ends_.check_stop_all(); }

  // The ids of the trials waiting to start, for messages.
  std::vector<std::string> waiting_trials();

  bool interrupted() const { return wind_down_.interrupted(); }
  const std::string& interrupt_reason() const { return wind_down_.interrupt_reason(); }
  bool winding_down() const { return wind_down_.winding_down(); }
  bool finished() const;

  // The end of an event-loop turn: finished trials leave the table (their
  // history is in the store); the best few stay as progress-table rows.
  void retire_finished() { rows_.retire(trials_.retire_finished()); }

  ProgressSnapshot snapshot(double elapsed_s) const { return rows_.snapshot(trials_, elapsed_s); }
  ExperimentSummary summarize() const;

 private:
  void launch_waiting();

  TrialTable trials_;
  storage::CheckpointManager checkpoints_;
  TrialParts parts_;  // the controller's, with the two above
  WindDown wind_down_;
  TrialHooks hooks_;
  TrialSupply supply_;
  RunStart start_;
  HandAhead hand_ahead_;
  RunEnds ends_;
  TrialReports reports_;
  ProgressRows rows_;
};

}  // namespace tune
