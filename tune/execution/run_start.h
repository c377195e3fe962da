// RunStart: a trial's run, from its start. It gives a waiting trial a group
// (new processes, live idle ranks, a prestarted spare, its own ranks kept
// inside report() since its pause), the START each rank hears (at once, or
// when a launched rank says HELLO), the run's first leases
// (tune/execution/leases.h) and its RUNNING status; and it starts a trial on the
// ranks it was handed to ahead (tune/execution/hand_ahead.h). Every run starts from
// the trial's latest checkpoint, or from scratch, unless it resumes in place.
//
// Owned by TrialRuns; not thread-safe. A group that cannot start fails its
// trial (launch() returns false); StorageError propagates.
#pragma once

#include <string>

#include "core/protocol.h"
#include "tune/execution/leases.h"
#include "tune/execution/trial_hooks.h"
#include "tune/execution/trial_parts.h"
#include "tune/execution/wind_down.h"
#include "tune/execution/worker_launch.h"

namespace tune {

class RunStart {
 public:
  RunStart(const TrialParts& parts, WorkerLaunchContext launch, const WindDown& wind_down,
           TrialHooks& hooks);

  // Starts a PENDING or PAUSED trial on a group. False when its group could
  // not start: the trial is FAILING with the error, its run to be concluded.
  bool launch(Trial& trial);
  // Starts trial `trial` on the ranks of `from`, which just ended and held
  // its START (WorkerGroups::hand_over gave it their group): RUNNING there.
  void begin_handed_over(Trial& trial, const std::string& from);
  // Starts a spare group (WorkerGroupOptions::prestart); false, logged,
  // when it cannot start.
  bool start_spare();
  // A rank's HELLO: a spare rank waits, unbound; a launched rank gets its
  // START. Throws ProtocolError for a HELLO no rank may send.
  void on_hello(const std::string& routing_id, const protocol::Hello& hello);

  protocol::Start start_message(const Trial& trial, int rank, int master_port) const;
  // A run's first leases, from `start_iteration` on: its START (or the
  // CONTINUE that resumes it in place) carries them.
  void grant_first_leases(Trial& trial, int64_t start_iteration) const;
  // What the scheduler and the stoppers say of the leases of `trial`, which
  // reported `iteration` and goes on.
  LeaseTerms lease_terms(const Trial& trial, int64_t iteration) const;

 private:
  void restart_from_checkpoint(Trial& trial);
  void skip_missing_checkpoints(Trial& trial);
  int world_size() const;
  void reset_run(Trial& trial);
  void record_placements(const Trial& trial, const Group& group);

  TrialParts parts_;
  WorkerLaunchContext launch_;
  const WindDown& wind_down_;
  TrialHooks& hooks_;
  int spares_started_ = 0;  // serials of spare groups
};

}  // namespace tune
