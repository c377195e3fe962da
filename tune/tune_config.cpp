#include "tune/tune_config.h"

namespace tune {

StopCondition::StopCondition(std::map<std::string, double> at_least) {
  if (at_least.empty()) return;
  for (const auto& [key, threshold] : at_least) criteria_.push_back({key, threshold});
  stopper_ = std::make_shared<CriteriaStopper>(criteria_);
}

}  // namespace tune
