// TrialSupply: where the trials come from. New ones from the searcher's
// suggestions, up to its max_pending_trials, each written with the searcher
// state that produced it; on resume, those of an earlier run from the
// store, each in the status a resumed experiment gives it (running ones
// restart from their latest checkpoint; ERROR ones with resume_errored or
// restart_errored), with the searcher's and scheduler's state. It saves
// that state for the next resume.
//
// Owned by TrialRuns; not thread-safe. StorageError propagates.
#pragma once

#include <cstdint>
#include <string>

#include "tune/execution/trial_parts.h"
#include "tune/execution/wind_down.h"

namespace tune {

class TrialSupply {
 public:
  TrialSupply(const TrialParts& parts, const WindDown& wind_down);

  // Rebuilds the trials, the searcher and the scheduler from the store (resume).
  void load();
  // Writes the searcher's and scheduler's state into the open batch: always
  // when `force`, else at most once a second.
  void save_state(bool force);
  // Creates the trials the searcher suggests now, while fewer than its
  // max_pending_trials are PENDING.
  void create_trials();

  // No trial is to come: the searcher is finished, or a stopper stopped all.
  bool exhausted() const { return searcher_finished_ || wind_down_.stop_all_reason(); }

 private:
  void resume_status(Trial& trial);
  // The new trial's directory name: its id, or the spec's trial_dirname's
  // (checked: one path component, not taken). Throws ConfigError.
  std::string dir_name(const std::string& id, const Json& config) const;

  TrialParts parts_;
  const WindDown& wind_down_;
  int64_t next_index_ = 0;
  bool searcher_finished_ = false;
  Clock::time_point last_state_save_;
};

}  // namespace tune
