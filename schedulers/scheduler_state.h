// SchedulerState: what a trial scheduler's saved state shows, for a reader
// that does not run the scheduler (the dashboard, a report). The controller
// stores TrialScheduler::save() in the experiment database
// (experiment_state, key 'scheduler'); its layout belongs to each scheduler,
// and decode_scheduler_state is the one reader of it outside them.
//
//   ASHA                   its brackets' rungs, each with the values
//                          recorded there and the cut-off a trial arriving
//                          now must reach
//   asynchronous HyperBand the same: it is ASHA over HyperBand's brackets
//                          (HyperBandOptions::asynchronous)
//   HyperBand              its brackets: band, s, current milestone, the
//                          trials it keeps, halvings left, live trials
//
// Values are the metric's own, under the scheduler's mode (the saved scores
// carry the mode's sign).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/types.h"

namespace tune::schedulers {

struct SchedulerState {
  struct Rung {
    double milestone = 0;
    // (trial id, value) in arrival order; NaN for a value that was not a number.
    std::vector<std::pair<std::string, double>> recorded;
    // ASHA's cut-off: the (1 - 1/reduction_factor) quantile of the recorded
    // values (worse is stopped). NaN while nothing is recorded.
    double cutoff = std::numeric_limits<double>::quiet_NaN();
    // Per recorded value, the cut-off it was compared with when it arrived:
    // that of the values recorded before it (NaN for the first). The
    // decision taken then, not the one the final cut-off would take.
    std::vector<double> cutoff_at_arrival;
    // Per recorded value: worse than its cutoff_at_arrival, so ASHA's
    // stopping rule ended the trial there (at max_t every trial ends).
    std::vector<bool> below_cutoff;
  };
  struct AshaBracket {
    std::vector<Rung> rungs;  // lowest milestone first
  };

  struct LiveTrial {
    std::string trial_id;
    double time = 0;              // time_attr at its last result; 0 before the first
    std::optional<double> value;  // the metric at its last result; none before one has it
  };
  struct HyperBandBracket {
    int64_t band = 0;      // the band (round of brackets) it belongs to
    int64_t s = 0;         // HyperBand's s: how many halvings it began with
    int64_t n = 0;         // the trials it keeps at its current milestone
    double milestone = 0;  // where its trials pause next
    int64_t halvings = 0;  // halvings left
    std::vector<LiveTrial> live;
    int64_t n0 = 0;                   // the trials it takes in all
    std::vector<double> milestones;   // every milestone it has, the first (r0) first
    std::vector<std::string> trials;  // every trial it ever took, in arrival order
  };

  std::vector<AshaBracket> asha;            // ASHA and asynchronous HyperBand
  std::vector<HyperBandBracket> hyperband;  // synchronous HyperBand
};

// What `saved` shows, for the scheduler that make_scheduler(type, options)
// (schedulers/trial_scheduler.h) creates. `experiment_mode` ranks unless
// the options set their own mode. Schedulers without such a view (FIFO,
// median stopping, PBT and PB2, whose exploits the database keeps in a
// table of their own) and a state not saved yet (null or {}) give an empty
// SchedulerState. Throws ConfigError as make_scheduler does for options it
// rejects, and tune::Error when `saved` is not of the scheduler's layout.
SchedulerState decode_scheduler_state(const std::string& type, const Json& options,
                                      Mode experiment_mode, const Json& saved);

// The scheduler whose save() wrote `saved`, for a reader that does not know
// the experiment's: "hyperband" (synchronous), "asha" (ASHA or asynchronous
// HyperBand: the same layout), or "" when neither.
std::string saved_scheduler_type(const Json& saved);

}  // namespace tune::schedulers
