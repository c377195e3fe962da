// TrialRuns: the lives of an experiment's trials, between the event loop
// (tune/controller.h) and the parts it drives. It creates trials from the
// searcher, starts the ones the scheduler picks, answers the ranks'
// messages, turns complete iterations into decisions (tune/decide.h), ends
// runs when their groups are gone, applies PBT's exploits, and stops the
// whole experiment on an interrupt or a stopper's stop_all. Every status
// change goes through the TrialTable.
//
// Faults of one trial stay in it: a group that cannot start, a checkpoint
// that cannot be published or cloned, a broken rank fail that trial
// (retried under max_failures). StorageError and exceptions from user
// callbacks propagate: the experiment cannot go on.
//
// Owned by the controller's event loop; not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "storage/checkpoint_manager.h"
#include "storage/experiment_store.h"
#include "tune/control_channel.h"
#include "tune/controller.h"
#include "tune/decide.h"
#include "tune/leases.h"
#include "tune/plugins.h"
#include "tune/resource_pool.h"
#include "tune/run_log.h"
#include "tune/trial_table.h"
#include "tune/worker_groups.h"
#include "tune/worker_launch.h"

namespace tune {

class TrialRuns {
 public:
  // The parts it works with, owned by the controller.
  struct Parts {
    const ExperimentSpec& spec;
    const ControllerOptions& options;
    storage::ExperimentStore& store;
    ResourcePool& pool;
    Plugins& plugins;
    WorkerGroups& groups;
    ControlChannel& channel;
    RunLog& log;
    WorkerLaunchContext launch;
  };
  explicit TrialRuns(Parts parts);

  // Rebuilds the trials, the searcher and the scheduler from the store (resume).
  void load();
  // Writes the searcher's and scheduler's state into the open batch: always
  // when `force`, else at most once a second.
  void save_state(bool force);

  void create_trials();
  void start_trials();

  void on_message(const std::string& routing_id, const Peer* peer, protocol::Message& message);
  void on_group_event(const GroupEvent& event);
  // A rank of `peer`'s trial sent what the protocol forbids: its trial fails.
  void fail_peer(const Peer& peer, const std::string& reason);

  // Stops launching; trials that have checkpointed pause at their next
  // report, the others are killed; after interrupt_grace_s the rest are
  // killed too (check_interrupt_deadline). Everything stays resumable.
  void interrupt(const std::string& reason);
  void check_interrupt_deadline(Clock::time_point now);
  void kill_all_running();
  // A stopper's stop_all(): no trial is created or started any more;
  // waiting trials end TERMINATED now, running ones at their next report.
  void check_stop_all();

  bool interrupted() const { return interrupted_; }
  const std::string& interrupt_reason() const { return interrupt_reason_; }
  bool winding_down() const { return interrupted_ || stop_all_; }
  bool finished() const;

  // The end of an event-loop turn: finished trials leave the table (their
  // history is in the store); the best few stay as progress-table rows.
  void retire_finished();

  ProgressSnapshot snapshot(double elapsed_s) const;
  ExperimentSummary summarize() const;

 private:
  void resume_status(Trial& trial);
  // PENDING and PAUSED trials that no group holds a START for, in creation order.
  std::vector<Trial*> waiting();
  void launch_waiting();
  void launch(Trial& trial);
  void reset_run(Trial& trial);
  void record_placements(const Trial& trial, const Group& group);
  void announce_run(const Trial& trial, GroupSource source);
  void hand_ahead();
  void hand_ahead_to(Trial& running, Group& group);
  void run_handed_over(Trial& trial, const std::string& from);
  void take_back_handed(Group& group);
  void stop_waiting_trials();
  void end_waiting_trial(Trial& trial, const std::string& reason);

  void on_hello(const std::string& routing_id, const protocol::Hello& hello);
  protocol::Start start_message(const Trial& trial, int rank, int master_port) const;
  void on_report(Trial& trial, int rank, const protocol::Report& report);
  void complete_iteration(Trial& trial, CompleteIteration done);
  // What the scheduler and the stoppers say of the leases (tune/leases.h) of
  // `trial`, which reported `iteration` and goes on.
  LeaseTerms lease_terms(const Trial& trial, int64_t iteration) const;
  // A run's first leases, from `start_iteration` on: its START (or the
  // CONTINUE that resumes it in place) carries them.
  void grant_first_leases(Trial& trial, int64_t start_iteration) const;
  Json result_of(const Trial& trial, const CompleteIteration& done, double now) const;
  void record_result(Trial& trial, CompleteIteration done, Json result, double now);
  void apply(Trial& trial, const Action& action);

  void fail(Trial& trial, const std::string& error, bool from_worker);
  void on_rank_exit(Trial& trial, int rank, const ExitStatus& status);
  void maybe_conclude(Trial& trial);
  void conclude(Trial& trial, bool keep_ranks);
  void notify_end(Trial& trial);
  void apply_exploit(Trial& trial, const schedulers::Exploit& exploit);
  void fail_waiting(Trial& trial, const std::string& error);
  void kill_for_interrupt(Trial& trial);
  bool start_spare();
  void restart_from_checkpoint(Trial& trial);

  const ExperimentSpec& spec_;
  const ControllerOptions& options_;
  storage::ExperimentStore& store_;
  ResourcePool& pool_;
  Plugins& plugins_;
  WorkerGroups& groups_;
  ControlChannel& channel_;
  RunLog& log_;
  WorkerLaunchContext launch_;
  TrialTable trials_;
  storage::CheckpointManager checkpoints_;
  std::vector<std::string> param_columns_;  // the searched keys, for the progress table
  std::vector<TrialRow> finished_rows_;     // the best retired trials, best first, bounded

  int64_t next_index_ = 0;
  int spares_started_ = 0;  // serials of spare groups (WorkerGroupOptions::prestart)
  // Whether waiting trials are handed ahead to running ones' ranks
  // (hand_ahead): reused one-rank groups, a scheduler that chooses_ahead.
  bool hands_ahead_ = false;
  bool searcher_finished_ = false;
  int64_t num_results_ = 0;
  Clock::time_point last_state_save_;
  bool interrupted_ = false;
  std::string interrupt_reason_;
  std::optional<Clock::time_point> interrupt_deadline_;
  bool stop_all_ = false;
  std::string stop_all_reason_;
};

}  // namespace tune
