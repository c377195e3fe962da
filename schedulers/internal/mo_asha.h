// MO-ASHA (Schmucker et al. 2021, "Multi-objective Asynchronous Successive
// Halving"; Syne Tune's MOASHA): ASHA's stopping rule (schedulers/internal/
// asha.h) with the trials at a rung ranked by several objectives instead of
// one metric.
//
// Rungs at grace_period * rf^k up to max_t, one bracket. A trial's first
// result at or past a rung is recorded there and ranked among the rung's
// records by NSGA-II's order (core::elite_order: non-dominated rank, then
// crowding distance, so the spread of the front survives too): it goes on
// while among the first ceil(n / rf) of the n recorded, else it stops. At
// max_t every trial stops. Results lacking time_attr or an objective are
// ignored (kContinue), as ASHA's. With one objective (set_search_properties)
// the order is by value, and the rule is ASHA's.
//
// A trial's constraint values (core::kConstraintsKey) count: a feasible
// trial ranks before every infeasible one.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/pareto.h"
#include "schedulers/internal/fifo.h"
#include "schedulers/scheduler_options.h"
#include "schedulers/trial_scheduler.h"

namespace tune::schedulers {

class MoAshaScheduler final : public TrialScheduler {
 public:
  // Throws ConfigError naming the option as ASHA's constructor does.
  explicit MoAshaScheduler(MoAshaOptions options);

  void set_search_properties(const std::string& metric, Mode mode) override;
  void set_objectives(const std::vector<Objective>& objectives) override;
  Decision on_trial_result(const TrialView& trial, const Json& result) override;
  // As FIFO: it never pauses, and runs pending trials oldest first.
  int choose_trial_to_run(const std::vector<TrialView>& candidates) override {
    return fifo_.choose_trial_to_run(candidates);
  }
  int64_t continues_through(const TrialView& trial, int64_t iteration) const override;
  bool chooses_ahead() const override { return true; }
  bool pauses_trials() const override { return false; }
  Json save() const override;
  void restore(const Json& state) override;
  std::string debug_string() const override;
  std::string kind() const override { return "mo_asha"; }

 private:
  struct Rung {
    double milestone;
    std::vector<std::pair<std::string, core::Point>> recorded;  // in arrival order
    std::vector<double> violations;                             // parallel to recorded
  };

  MoAshaOptions options_;
  std::vector<Objective> objectives_;
  std::vector<Rung> rungs_;  // highest milestone first
  FifoScheduler fifo_;
};

}  // namespace tune::schedulers
