// What a result, and the end of a worker group, mean for a trial: pure
// functions of their inputs, so every rule is testable without processes.
//
// decide() merges, for one complete iteration, the scheduler's decision,
// the stoppers', the experiment's stop_all and interrupt into one action.
// judge_end() says where a trial goes once its group is gone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/types.h"
#include "tune/execution/trial_phase.h"

namespace tune {

struct ResultVerdicts {
  int64_t iteration = 0;
  Decision scheduler = Decision::kContinue;
  std::string scheduler_name;                  // its debug_string(), for reasons (unless kContinue)
  std::string scheduler_reason;                // its decision_reason(); empty: name it instead
  std::optional<std::string> stopper_reason;   // the first stopper that stopped the trial
  std::optional<std::string> stop_all_reason;  // a stopper ends the whole experiment
  bool pause_requested = false;                // the experiment is being interrupted
  int64_t checkpoint_iteration = 0;            // the trial's latest checkpoint; 0: none
};

struct Action {
  enum class Kind {
    kContinue,
    kStop,   // ends TERMINATED once the ranks said DONE
    kPause,  // ends PAUSED once the ranks said DONE; resumes from its checkpoint (or scratch)
  };
  Kind kind = Kind::kContinue;
  std::string reason;  // the status reason

  // What the ranks hear.
  Decision decision() const;
};

// A stopper's STOP overrides the scheduler's PAUSE (as in Ray); stop_all
// stops; an interrupt turns CONTINUE into a pause that keeps the progress. A
// PAUSE of a trial that never checkpointed pauses it too: it resumes in place
// when its ranks can wait inside report(), else from scratch, as in Ray
// (paused_from_scratch_reason says so).
Action decide(const ResultVerdicts& verdicts);

// The status reason of a scheduler's pause of a trial without a checkpoint
// whose ranks cannot wait in place: its resume restarts it from iteration 1.
std::string paused_from_scratch_reason(const std::string& scheduler_name, int64_t iteration);

// The status reason of a trial the scheduler stopped at `iteration`: its
// own reason (TrialScheduler::decision_reason) when it gave one, else its
// name (debug_string()); either way ending "at iteration N".
std::string scheduler_stop_reason(const std::string& reason, const std::string& name,
                                  int64_t iteration);

// How a group ended, as judge_end() needs it.
struct GroupEnd {
  TrialPhase phase = TrialPhase::kRunning;  // the trial's phase when the group ended
  bool all_done = false;                    // every rank said DONE
  std::string end_reason;                   // why STOPPING or PAUSING
  std::string error;                        // the failure, when FAILING
  int64_t iteration = 0;                    // the last complete iteration
  int64_t checkpoint_iteration = 0;
  int64_t num_failures = 0;          // before this end
  int max_failures = 0;              // -1: unlimited
  bool experiment_stopping = false;  // a stop_all (an interrupt leaves retries to the resume)
  // The cluster ended the run, not the trial: a node of its group failed,
  // or Slurm held its step pending. Retried without counting a failure...
  bool cluster_fault = false;
  // ... unless the cluster ended this many runs of the trial before this
  // one, since its last new result (kClusterEndsCharged).
  int cluster_ends_in_row = 0;
  // The trial's results break the experiment's configuration: ERROR, not
  // retried, whatever max_failures allows.
  bool misconfigured = false;
};

// How long a trial that may fail without limit (max_failures = -1) waits
// before its restart after `failures` failures: 1 s, doubling to 60 s, so
// that a trial failing at once does not restart many times a second.
double restart_backoff_s(int64_t failures);

struct EndOutcome {
  TrialPhase next = TrialPhase::kTerminated;  // kTerminated, kPaused, kPending or kError
  std::string reason;
  bool failure = false;  // counts against max_failures
};

// A run the cluster ended (GroupEnd::cluster_fault) is retried, uncounted,
// however many failures the trial had; one the experiment's end stops is not.
// The kClusterEndsCharged-th such run in a row without a new result between
// them counts as one failure all the same: a cluster that can never run the
// trial (a node whose steps Slurm holds forever) must not retry it forever.
inline constexpr int kClusterEndsCharged = 10;

EndOutcome judge_end(const GroupEnd& end);

}  // namespace tune
