// TrialController: the single-threaded event loop that runs an experiment,
// as Ray Tune's TuneController. tune/README.md draws its parts: the trial
// table (the only writer of trial status), the worker groups over a
// Launcher, the control channel, the resource pool, the iteration collector
// and decide(), the checkpoint manager, the plug-ins.
//
// One loop turn: create trials the searcher suggests, start the ones the
// scheduler picks while the resource pool allows, commit the store's batch,
// send the queued replies, then poll the control channel, the groups' exit
// descriptors and a signal pipe until a message, an exit or a timer is due.
// Replies are sent only after the batch that holds their results is
// committed.
//
// Faults are confined to their trial: a group that cannot start, a
// checkpoint that cannot be published or cloned, a rank's malformed
// message fail that trial (retried under max_failures). An error that
// leaves the experiment unable to go on (the store fails, a callback
// throws) ends run() with that exception after marking the experiment
// FAILED; it stays resumable.
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
#include "tune/launch/launcher.h"
#include "tune/progress.h"
#include "tune/spec/experiment.h"

namespace tune {

struct ControllerOptions {
  // How a worker starts: argv of an executable whose main() calls
  // train::run_worker() when tune::is_worker(). Empty: this executable.
  std::vector<std::string> worker_argv;
  // Where ranks run. Null: the launcher the spec's cluster settings choose
  // (tune/launch/make_launcher.h), which also says the address the control
  // channel binds (127.0.0.1 unless the settings name one). A launcher naming
  // its own CPUs and GPUs (Launcher::total_cpus, total_gpus) sizes the
  // resource pool when the spec sets no total_cpus or total_gpus.
  std::shared_ptr<Launcher> launcher;
  // Python only: local ranks fork from this pre-started interpreter instead
  // of starting python3 (tune/launch/local/zygote.h). Empty: exec.
  std::vector<std::string> zygote_argv;
  // Folders launcher "ssh" looks for tunerun-ssh-rank in first
  // (LaunchContext::program_dirs); empty: beside the worker and this executable.
  std::vector<std::string> program_dirs;
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
  int64_t rejected_messages = 0;    // malformed or unexpected control messages
  int64_t refused_connections = 0;  // peers without this experiment's CURVE keys
  bool interrupted = false;         // a signal or fail_fast ended it early; resumable
  double wall_s = 0;
  // The controller's decision latency: from a REPORT's receipt to the
  // DECISION it brought being sent (for a group, from its last rank's
  // REPORT), over the decisions sent; reports within a lease get none.
  struct Latency {
    int64_t count = 0;
    double p50_ms = 0;
    double p99_ms = 0;
    double max_ms = 0;
  };
  Latency decision_latency;
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
