// FIFO: Ray Tune's default scheduler. Every trial runs to its end (or its
// stop criteria); waiting trials start in creation order, paused ones first.
#pragma once

#include <limits>

#include "schedulers/trial_scheduler.h"

namespace tune::schedulers {

class FifoScheduler final : public TrialScheduler {
 public:
  // FIFO reads no metric: any number of objectives will do.
  void set_objectives(const std::vector<Objective>& objectives) override {}
  Decision on_trial_result(const TrialView& trial, const Json& result) override {
    return Decision::kContinue;
  }
  int choose_trial_to_run(const std::vector<TrialView>& candidates) override;
  // FIFO never decides: a trial's ranks never wait for it.
  int64_t continues_through(const TrialView& trial, int64_t iteration) const override {
    return std::numeric_limits<int64_t>::max();
  }
  // It never pauses: its pick among pending trials is the oldest, now or later.
  bool chooses_ahead() const override { return true; }
  bool pauses_trials() const override { return false; }
  std::string debug_string() const override { return "FIFO"; }
  std::string kind() const override { return "fifo"; }
};

}  // namespace tune::schedulers
