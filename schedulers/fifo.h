// FIFO: Ray Tune's default scheduler. Every trial runs to its end (or its
// stop criteria); waiting trials start in creation order, paused ones first.
#pragma once

#include "schedulers/trial_scheduler.h"

namespace tune::schedulers {

class FifoScheduler final : public TrialScheduler {
 public:
  Decision on_trial_result(const TrialView& trial, const Json& result) override {
    return Decision::kContinue;
  }
  int choose_trial_to_run(const std::vector<TrialView>& candidates) override;
  std::string debug_string() const override { return "FIFO"; }
};

}  // namespace tune::schedulers
