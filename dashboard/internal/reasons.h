// The reason shown for each trial: the one the controller recorded with its
// last status change (a scheduler's stop names what it decided, e.g.
// "stopped by scheduler AsyncHyperBand at rung 2 of 3 (milestone 3): ..."),
// never one reconstructed from later state. A PBT recipient also says which
// trial it exploited (the exploits table). Reasons recorded by older
// versions, which named the scheduler by its whole status line, keep only
// its name.
#pragma once

#include <map>
#include <string>

namespace tune::dashboard {
class ExperimentDb;
}

namespace tune::dashboard::internal {

class ReasonContext {
 public:
  // Reads the exploits table.
  static ReasonContext load(const ExperimentDb& db);

  std::string describe(const std::string& trial_id, const std::string& reason) const;

 private:
  std::map<std::string, std::string> last_exploit_;  // recipient -> "exploited trial X at ..."
};

}  // namespace tune::dashboard::internal
