// A trial as the controller tracks it while the experiment runs. The store
// holds the durable copy, written only by the TrialTable (tune/execution/trial_table.h);
// the live worker group is WorkerGroups' (tune/launch/worker_groups.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "core/config.h"
#include "schedulers/trial_scheduler.h"
#include "storage/checkpoint_manager.h"
#include "tune/execution/iteration.h"
#include "tune/execution/trial_phase.h"
#include "tune/system/clock.h"  // unix_now

namespace tune {

struct Trial {
  // Fixed at creation.
  std::string id;  // "<experiment>_<index:05d>", also its directory name
  int64_t index = 0;
  std::filesystem::path dir;
  double created_at = 0;

  // Changed by the TrialTable only (transition, set_reason), which writes them.
  TrialPhase phase = TrialPhase::kPending;
  std::string status_reason;
  std::optional<double> started_at;   // the first start; kept across pauses and restarts
  std::optional<double> finished_at;  // set on TERMINATED or ERROR only

  Json config;  // PBT's exploit replaces it
  int attempt = 0;
  int64_t num_failures = 0;
  int cluster_ends_in_row = 0;  // runs the cluster ended (cluster_fault) since its last new result
  int64_t iteration = 0;        // last complete iteration
  Json last_result;             // null until the first complete iteration
  storage::TrialCheckpoints checkpoints;

  // The current run, reset at every launch.
  int world_size = 0;            // its ranks (an elastic trial's vary from run to run)
  IterationCollector collector;  // reports of iterations not yet complete
  double time_offset_s = 0;      // time_total_s before this run (resumed trials)
  // The ranks' lease (protocol::DecisionMsg::continue_through): their
  // reports up to this iteration get no decision unless one says stop or pause.
  int64_t continue_through = 0;
  // ... and their checkpoint lease at the run's start (DecisionMsg::checkpoint_through).
  int64_t checkpoint_through = 0;
  bool pause_at_next_report = false;  // the experiment is stopping: pause, keep progress
  bool suspended = false;  // PAUSED with its ranks kept, waiting inside report(): resumes in place
  std::string end_reason;  // why STOPPING or PAUSING (the final status reason)
  std::optional<schedulers::Exploit> exploit;  // PBT: applied when the pause completes
  std::string error;                           // while FAILING: the failure's message
  bool error_from_worker = false;  // `error` came from a rank's ERROR, not an exit status
  // The cluster ended the run (a node failed, Slurm held its step): not
  // counted against max_failures.
  bool cluster_fault = false;
  // Its results break the experiment's configuration (the metric missing
  // from a result): a restart cannot help, so it ends in ERROR at once.
  bool misconfigured = false;
  // With max_failures = -1 a failed trial restarts no sooner than this (on
  // the controller's clock): 1 s after its first failure, doubling to 60 s.
  Clock::time_point restart_after{};
  // An elastic trial pausing to run again with more ranks: it waits as
  // PENDING, not PAUSED, and is no scheduler's pause.
  bool resizing = false;

  TrialStatus status() const { return status_of(phase); }
  const Json* last_result_or_null() const { return last_result.is_null() ? nullptr : &last_result; }
  schedulers::TrialView view() const {
    return {id, status(), config, last_result_or_null(), checkpoints.latest};
  }
};

}  // namespace tune
