#include "tune/stopper.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tune {

bool CriteriaStopper::should_stop_trial(const std::string& trial_id, const Json& result) {
  for (const auto& c : criteria_) {
    auto it = result.find(c.key);
    if (it == result.end() || !it->is_number()) continue;
    const double value = it->get<double>();
    const bool met = c.comparison == StopCriterion::Comparison::kAtLeast ? value >= c.threshold
                                                                         : value <= c.threshold;
    if (met) {
      reason_ = fmt::format(
          "stop criterion {} {} {} met ({})", c.key,
          c.comparison == StopCriterion::Comparison::kAtLeast ? ">=" : "<=", c.threshold, value);
      return true;
    }
  }
  return false;
}

int64_t CriteriaStopper::continues_through(const std::string&, int64_t iteration) const {
  int64_t through = std::numeric_limits<int64_t>::max();
  for (const auto& c : criteria_) {
    if (c.key != "training_iteration" || c.comparison != StopCriterion::Comparison::kAtLeast) {
      return iteration;
    }
    through = std::min(through, static_cast<int64_t>(std::ceil(c.threshold)) - 1);
  }
  return std::max(iteration, through);
}

}  // namespace tune
