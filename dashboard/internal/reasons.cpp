#include "dashboard/internal/reasons.h"

#include <fmt/format.h>

#include <string_view>

#include "dashboard/experiment_db.h"
#include "storage/statement.h"

namespace tune::dashboard::internal {

using storage::Statement;

ReasonContext ReasonContext::load(const ExperimentDb& db) {
  ReasonContext out;
  Statement exploits(db.handle(),
                     "SELECT trial_id, donor_id, training_iteration, donor_iteration FROM exploits"
                     " ORDER BY id");
  while (exploits.step()) {
    out.last_exploit_[exploits.column_text(0)] =
        fmt::format("exploited trial {} at iteration {} (from its iteration {})",
                    exploits.column_text(1), exploits.column_int(2), exploits.column_int(3));
  }
  return out;
}

std::string ReasonContext::describe(const std::string& trial_id, const std::string& reason) const {
  // Before schedulers gave their reasons: "stopped by scheduler NAME:
  // num_stopped=... <its whole state> at iteration N" (no regex: the state
  // can be long).
  constexpr std::string_view kPrefix = "stopped by scheduler ";
  constexpr std::string_view kAt = " at iteration ";
  std::string out = reason;
  const size_t colon = reason.find(": num_stopped=");
  const size_t at = reason.rfind(kAt);
  if (reason.starts_with(kPrefix) && colon != std::string::npos && at != std::string::npos &&
      at > colon) {
    const std::string head = reason.substr(kPrefix.size(), colon - kPrefix.size());
    out = fmt::format("stopped by scheduler {} at iteration {}", head.substr(0, head.find(' ')),
                      reason.substr(at + kAt.size()));
  }
  if (auto it = last_exploit_.find(trial_id); it != last_exploit_.end()) {
    out = out.empty() ? it->second : out + "; " + it->second;
  }
  return out;
}

}  // namespace tune::dashboard::internal
