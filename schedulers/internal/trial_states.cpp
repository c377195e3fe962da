#include "schedulers/internal/trial_states.h"

namespace tune::schedulers::detail {

TrialStatus TrialStates::status(const std::string& trial_id) const {
  auto it = states_.find(trial_id);
  return it == states_.end() ? TrialStatus::kTerminated : it->second;
}

bool TrialStates::others_waiting(const std::string& trial_id) const {
  for (const auto& [id, status] : states_) {
    if (id != trial_id && (status == TrialStatus::kPending || status == TrialStatus::kPaused)) {
      return true;
    }
  }
  return false;
}

int TrialStates::count(TrialStatus status) const {
  int n = 0;
  for (const auto& [id, s] : states_) n += s == status;
  return n;
}

std::vector<std::string> TrialStates::with(TrialStatus status) const {
  std::vector<std::string> ids;
  for (const auto& [id, s] : states_) {
    if (s == status) ids.push_back(id);
  }
  return ids;
}

Json TrialStates::save() const {
  Json out = Json::object();
  for (const auto& [id, s] : states_) out[id] = std::string(to_string(s));
  return out;
}

void TrialStates::restore(const Json& state) {
  states_.clear();
  for (const auto& [id, s] : state.items()) {
    states_[id] = trial_status_from_string(s.get<std::string>()).value_or(TrialStatus::kPending);
  }
}

}  // namespace tune::schedulers::detail
