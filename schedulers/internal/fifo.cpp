#include "schedulers/internal/fifo.h"

namespace tune::schedulers {

int FifoScheduler::choose_trial_to_run(const std::vector<TrialView>& candidates) {
  // Paused trials hold progress worth resuming; then the oldest pending one.
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].status == TrialStatus::kPaused) return static_cast<int>(i);
  }
  return candidates.empty() ? -1 : 0;
}

}  // namespace tune::schedulers
