// Turns the controller's status reasons into what a reader of the trial
// table wants: "stopped by scheduler AsyncHyperBand... at iteration 9"
// becomes "stopped by ASHA at rung 3 (iteration 9)", and a PBT recipient
// says which trial it exploited.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace tune::dashboard {
class ExperimentDb;
}

namespace tune::dashboard::internal {

class ReasonContext {
 public:
  // Reads the scheduler type (spec), ASHA's rungs (experiment_state) and the
  // exploits table.
  static ReasonContext load(const ExperimentDb& db);

  std::string describe(const std::string& trial_id, const std::string& status,
                       const std::string& reason) const;

 private:
  std::string scheduler_;  // "asha", "pbt", ...
  struct Rung {
    int64_t number = 0;  // the highest ASHA rung the trial was recorded at, 1: the lowest
    double max_t = 0;    // its bracket's top milestone
  };
  std::map<std::string, Rung> rungs_;
  std::map<std::string, std::string> last_exploit_;  // recipient -> "exploited trial X at ..."
};

}  // namespace tune::dashboard::internal
