// TrialController: the single-threaded event loop that runs an experiment.
//
// It owns the trials, the searcher, the scheduler, the stoppers and the
// experiment store. One loop turn: create trials the searcher suggests, start
// the ones the scheduler picks while CPUs and max_concurrent_trials allow,
// commit the store's batch, send the queued replies, then poll one ZeroMQ
// ROUTER socket (loopback) and the pidfds of all worker processes until a
// message, an exit or a timer is due. Replies are sent only after the batch
// that holds their results is committed.
//
// Not thread-safe; run() once per object. Throws ConfigError for a spec that
// cannot run (e.g. a trial needing more CPUs than exist) before it writes
// anything, and StorageError when the store fails.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tune/callback.h"
#include "tune/experiment_spec.h"
#include "tune/progress.h"

namespace tune {

struct ControllerOptions {
  // How a worker starts: argv of an executable whose main() calls
  // train::run_worker() when tune::is_worker(). Empty: this executable.
  std::vector<std::string> worker_argv;
  int verbosity = 1;  // 0: silent; 1: trial starts and ends; 2: every result
  // Null: log lines go to stderr as they are. Set (make_progress_reporter):
  // lines go through it and it gets a snapshot of every trial when it asks
  // (the live table on a terminal). Unused at verbosity 0.
  std::shared_ptr<ProgressReporter> progress;
  // Called once the control socket listens, with its endpoint (monitors, tests).
  std::function<void(const std::string& endpoint)> on_listen;
  // Hooks called from the event loop as trials start, report and end
  // (tune/callback.h says when each fires), in this order.
  std::vector<std::shared_ptr<Callback>> callbacks;

  // Continue the experiment already in the directory instead of starting one:
  // finished trials stay finished, running and paused ones restart from their
  // latest checkpoint, pending ones start, searcher and scheduler state is
  // restored. Ray's Tuner.restore options for trials that ended in ERROR:
  bool resume = false;
  bool resume_errored = false;   // retry them from their latest checkpoint
  bool restart_errored = false;  // retry them from scratch

  // SIGINT/SIGTERM: stop launching, pause running trials at their next
  // checkpointed report (kill those that never checkpoint), at most
  // interrupt_grace_s, then exit restorably. A second signal exits at once.
  bool handle_signals = false;
  double interrupt_grace_s = 30;
};

struct ExperimentSummary {
  std::filesystem::path experiment_dir;
  int64_t num_trials = 0;
  int64_t num_terminated = 0;
  int64_t num_errors = 0;
  int64_t num_results = 0;
  int64_t rejected_messages = 0;  // malformed or unexpected control messages
  bool interrupted = false;       // a signal or fail_fast ended it early; resumable
  double wall_s = 0;
  struct Best {
    std::string trial_id;
    double value = 0;
    Json config;
  };
  std::optional<Best> best;
};

class TrialController {
 public:
  TrialController(ExperimentSpec spec, ControllerOptions options);
  ~TrialController();  // kills any worker group still alive

  ExperimentSummary run();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tune
