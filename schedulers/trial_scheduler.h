// TrialScheduler: the plug-in that decides, after each result, whether a
// trial continues, pauses or stops, and which waiting trial runs next.
//
// Modelled on Ray Tune's TrialScheduler. The controller's event loop owns it
// and calls it from one thread; it needs no locks. Hooks and the trial state
// in which each fires:
//   on_trial_add       a trial was created (PENDING)
//   on_trial_result    a RUNNING trial completed an iteration -> Decision
//   on_trial_complete  a trial finished normally (now TERMINATED)
//   on_trial_error     a trial failed (now ERROR)
//   on_trial_remove    a trial was stopped: by a kStop decision (called at
//                      the decision), a stopper, or take_trials_to_stop
//
// Every hook tolerates trials it does not know or already forgot (a trial
// stopped at a decision is removed, then completes), so the controller need
// not track which hooks a scheduler has seen.
//   choose_trial_to_run among PENDING and PAUSED trials; idempotent: asking
//                      twice without a state change gives the same answer
//   save / restore     experiment checkpoint and resume (save_parts: by what changed)
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/errors.h"
#include "core/state_parts.h"
#include "core/types.h"

namespace tune::schedulers {

// What a scheduler may see of a trial. The controller owns the trials; this
// view is valid during the call only.
struct TrialView {
  const std::string& trial_id;
  TrialStatus status;
  const Json& config;
  const Json* last_result = nullptr;  // null until the trial's first result
  int64_t checkpoint_iteration = 0;   // iteration of its latest checkpoint; 0: none
};

// PBT's exploit: the paused trial restarts from the donor's latest checkpoint
// with `new_config` (the donor's config, explored).
struct Exploit {
  std::string donor_id;
  Json new_config;
};

class TrialScheduler {
 public:
  virtual ~TrialScheduler() = default;

  // The kind, as a sweep file's [scheduler] type names it ("asha",
  // "hyperband"); "custom" for a user's class. An asynchronous HyperBand is
  // an ASHA over HyperBand's brackets whose kind is "hyperband".
  virtual std::string kind() const { return "custom"; }

  // `metric`/`mode` are the experiment's (metric may be empty for FIFO).
  virtual void set_search_properties(const std::string& metric, Mode mode) {}
  // Several objectives (two or more), called instead. A scheduler that
  // compares trials by one metric refuses them: the default throws
  // ConfigError (key "metric").
  virtual void set_objectives(const std::vector<Objective>& objectives) {
    throw ConfigError::at_key(
        "metric",
        "this scheduler compares trials by one metric; with several objectives use the "
        "scheduler \"mo_asha\" or \"fifo\"");
  }

  virtual void on_trial_add(const TrialView& trial) {}
  // `result`: user metrics plus training_iteration, time_this_iter_s,
  // time_total_s, timestamp, trial_id.
  virtual Decision on_trial_result(const TrialView& trial, const Json& result) = 0;
  virtual void on_trial_complete(const TrialView& trial, const Json* last_result) {}
  virtual void on_trial_error(const TrialView& trial) {}
  virtual void on_trial_remove(const TrialView& trial) {}

  // Index into `candidates` (each PENDING or PAUSED) of the trial to run
  // next, or -1 to run none now.
  virtual int choose_trial_to_run(const std::vector<TrialView>& candidates) = 0;

  // The exploit to apply to PAUSED trial `trial_id` before it runs again, if
  // its pause is one (PBT, PB2); each exploit is handed out once. The
  // controller calls it right after on_trial_result returned kPause, and
  // again right before it resumes a PAUSED trial that choose_trial_to_run
  // picked: PBT's synchronous mode decides the exploits of trials paused
  // earlier only when the last trial reaches the perturbation point. On an
  // exploit the controller clones the donor's latest checkpoint into the
  // trial, replaces its config with new_config and records the exploit.
  virtual std::optional<Exploit> take_exploit(const std::string& trial_id) { return std::nullopt; }

  // Trials not running now (PAUSED, or PENDING) that the scheduler has
  // decided to end: HyperBand's losers of a halving, ASHA-promotion's
  // trials left unpromoted once nothing else can run. The controller calls
  // it once per event-loop turn, after creating trials and before
  // choose_trial_to_run, ends each listed trial that is PAUSED or PENDING
  // as TERMINATED without running it again ("stopped by scheduler"), then
  // calls on_trial_remove; it skips one still on its way there (PAUSE sent,
  // checkpoint not yet written), so a scheduler that can decide about such a
  // trial (HyperBand) lists it again each turn until on_trial_remove.
  virtual std::vector<std::string> take_trials_to_stop() { return {}; }

  // True: every report waits for this scheduler's decision before the
  // trial's next iteration starts (Ray's function API). False (the
  // default): a report without a checkpoint is pipelined and a decision
  // takes effect at the trial's next report (train/session.h).
  virtual bool needs_synchronous_reports() const { return false; }

  // The last iteration through which on_trial_result is sure to return
  // kContinue for RUNNING trial `trial`, which just reported `iteration`
  // and goes on. Until then its ranks report without waiting for any
  // decision (a lease; train/session.h), and the controller sends none.
  // The default, `iteration`: any report may be decided on. A scheduler
  // that decides only at milestones (ASHA's rungs) or never (FIFO) says so
  // here. A decision other than kContinue within a lease is still obeyed,
  // only later: at the rank's first report after it arrives.
  virtual int64_t continues_through(const TrialView& trial, int64_t iteration) const {
    return iteration;
  }

  // False when this scheduler never pauses a trial nor lets another trial
  // clone it: it only continues or stops trials, so no checkpoint is ever
  // needed for it (train::should_checkpoint is then false throughout).
  // Default true.
  virtual bool pauses_trials() const { return true; }

  // True when a PENDING trial that choose_trial_to_run picks now would
  // still be its pick whenever a running trial ends: it never pauses trials
  // and runs pending ones oldest first. The controller may then hand that
  // trial to the ranks of a running one ahead, to start the moment it ends
  // (reuse_workers: no round trip between trials). Default false.
  virtual bool chooses_ahead() const { return false; }

  // Why this scheduler last decided to end or pause `trial_id` (a kStop or
  // kPause from on_trial_result, or a listing by take_trials_to_stop), in
  // words for the trial's status reason and its event, naming the scheduler
  // and what it compared: "AsyncHyperBand at rung 2 of 3 (milestone 3):
  // accuracy 0.41 is below the cut-off 0.52 of the 4 trials recorded
  // there". The controller asks right after the decision, before
  // on_trial_remove. Empty (the default): the controller names the
  // scheduler by debug_string().
  virtual std::string decision_reason(const std::string& trial_id) const { return {}; }

  virtual Json save() const { return Json::object(); }
  virtual void restore(const Json& state) {}
  // save() in parts, for a store that writes only what changed (see
  // core/state_parts.h): the head and the chunks changed since the previous
  // call; every chunk (complete) on the first call and after restore. The
  // parts written so far assemble into save(). The default: save() whole.
  virtual StateParts save_parts() { return {.head = save()}; }

  // One line for `tunerun status`, e.g. "FIFO" or "ASHA: 3 rungs, ...".
  virtual std::string debug_string() const = 0;
};

}  // namespace tune::schedulers
