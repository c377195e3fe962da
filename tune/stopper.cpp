#include "tune/stopper.h"

#include <fmt/format.h>

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

}  // namespace tune
