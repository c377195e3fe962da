// A trial as the controller tracks it while the experiment runs. The store
// holds the durable copy; this adds the live worker group.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/types.h"
#include "schedulers/trial_scheduler.h"
#include "tune/process.h"

namespace tune {

using Clock = std::chrono::steady_clock;

// One rank of a running trial.
struct Worker {
  int rank = 0;
  std::optional<ChildProcess> process;
  std::string routing_id;       // its ZeroMQ identity, known after HELLO
  int64_t reported = 0;         // the last iteration this rank reported
  bool done = false;            // sent DONE
  Clock::time_point last_seen;  // spawn, then every message or heartbeat
};

// Reports of one iteration, gathered until every rank has sent its own.
struct PendingIteration {
  int ranks = 0;
  std::vector<Json> metrics;  // per rank, for cross-rank reductions
  Json reduce;                // rank 0's {metric: op}
  bool checkpoint = false;    // some rank staged checkpoint files
  double time_this_iter_s = 0;
  double time_total_s = 0;
};

struct Trial {
  std::string id;  // "<experiment>_<index:05d>", also its directory name
  int64_t index = 0;
  Json config;
  TrialStatus status = TrialStatus::kPending;
  std::string status_reason;
  std::filesystem::path dir;
  double created_at = 0;
  std::optional<double> started_at;
  std::optional<double> finished_at;
  int attempt = 0;
  int64_t num_failures = 0;
  int64_t iteration = 0;               // last complete iteration
  Json last_result;                    // null until the first complete iteration
  int64_t checkpoint_iteration = 0;    // iteration of the latest published checkpoint; 0: none
  double checkpoint_time_total_s = 0;  // time_total_s at that checkpoint: a resume goes on from it
  // Published checkpoints still on disk: (iteration, score), oldest first.
  std::vector<std::pair<int64_t, double>> checkpoints;

  // The live group, while RUNNING.
  std::vector<Worker> workers;
  pid_t process_group = 0;
  std::vector<std::string> gpus;  // the GPU ids its ranks hold, given back when it ends
  int master_port = 0;            // this run's rendezvous port (MASTER_PORT)
  std::map<int64_t, PendingIteration> pending;
  bool stopping = false;  // STOP or PAUSE was sent; ranks should finish with DONE
  std::string stop_reason;
  bool pausing = false;  // the STOP was a PAUSE: the trial ends PAUSED, resumable
  std::optional<schedulers::Exploit> exploit;  // PBT: applied when the pause completes
  double time_offset_s = 0;                    // time_total_s before this run (resumed trials)
  bool pause_requested = false;    // the experiment is stopping: pause at the next report
  bool interrupted = false;        // the experiment is stopping: the group was killed
  bool failing = false;            // the group is being torn down after a failure
  std::string error;               // the failure's message
  bool error_from_worker = false;  // `error` came from a rank's ERROR, not an exit status
  std::optional<Clock::time_point> settle_deadline;  // all ranks exited; wait for late messages
  std::optional<Clock::time_point> kill_deadline;    // SIGKILL the group then

  bool all_exited() const {
    for (const auto& w : workers) {
      if (!w.process || !w.process->exit_status()) return false;
    }
    return true;
  }
  bool all_done() const {
    for (const auto& w : workers) {
      if (!w.done) return false;
    }
    return !workers.empty();
  }
};

}  // namespace tune
