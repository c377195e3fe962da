// TrialReports: the ranks' REPORTs of running trials. The
// IterationCollector (tune/execution/iteration.h) waits for every rank's report of an
// iteration; a complete one has its checkpoint published, becomes a stored
// result and the trial's last_result, and is decided on: the scheduler's
// and the stoppers' verdicts, a stop_all or an interrupt merged by decide()
// (tune/execution/decide.h). The ranks hear the decision unless it continues the
// trial within their lease (tune/execution/leases.h); RunEnds applies it.
//
// A result without the experiment's metric or a stop criterion's key ends
// its trial in ERROR, unretried (Ray's strict metric checking, which
// TUNE_DISABLE_STRICT_METRIC_CHECKING=1 turns off).
// A checkpoint that cannot be published fails its trial; StorageError and
// exceptions from callbacks propagate.
//
// Owned by TrialRuns; not thread-safe.
#pragma once

#include <cstdint>

#include "core/protocol.h"
#include "tune/execution/hand_ahead.h"
#include "tune/execution/run_ends.h"
#include "tune/execution/run_start.h"
#include "tune/execution/trial_hooks.h"
#include "tune/execution/trial_parts.h"
#include "tune/execution/wind_down.h"

namespace tune {

class TrialReports {
 public:
  TrialReports(const TrialParts& parts, const WindDown& wind_down, TrialHooks& hooks,
               const RunStart& start, const HandAhead& hand_ahead, RunEnds& ends);

  // Rank `rank` of `trial` reported.
  void on_report(Trial& trial, int rank, const protocol::Report& report);

  int64_t num_results() const { return num_results_; }

 private:
  void complete_iteration(Trial& trial, CompleteIteration done);
  bool can_grow(const Trial& trial) const;
  Json result_of(const Trial& trial, const CompleteIteration& done, double now) const;
  std::string missing_keys(const Trial& trial, const CompleteIteration& done,
                           const Json& row) const;
  void record_result(Trial& trial, CompleteIteration done, Json result, double now);

  TrialParts parts_;
  const WindDown& wind_down_;
  TrialHooks& hooks_;
  const RunStart& start_;
  const HandAhead& hand_ahead_;
  RunEnds& ends_;
  // The spec's, once: every result is checked against them (missing_keys).
  const std::vector<Objective> objectives_;
  int64_t num_results_ = 0;
};

}  // namespace tune
