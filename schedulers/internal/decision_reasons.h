// DecisionReasons: the words of each trial's latest stop or pause decision,
// kept from the decision until the trial is removed, for
// TrialScheduler::decision_reason.
#pragma once

#include <map>
#include <string>

namespace tune::schedulers::detail {

class DecisionReasons {
 public:
  void set(const std::string& trial_id, std::string reason) {
    reasons_[trial_id] = std::move(reason);
  }
  std::string get(const std::string& trial_id) const {
    auto it = reasons_.find(trial_id);
    return it == reasons_.end() ? std::string() : it->second;
  }
  void forget(const std::string& trial_id) { reasons_.erase(trial_id); }

 private:
  std::map<std::string, std::string> reasons_;
};

// "1 trial", "3 trials".
inline std::string count_of(size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace tune::schedulers::detail
