#include "dashboard/internal/reasons.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "core/config.h"
#include "dashboard/experiment_db.h"
#include "storage/internal/statement.h"

namespace tune::dashboard::internal {
namespace {

using storage::internal::Statement;

std::string display_name(const std::string& scheduler) {
  if (scheduler == "asha") return "ASHA";
  if (scheduler == "hyperband") return "HyperBand";
  if (scheduler == "median") return "median stopping";
  if (scheduler == "pbt") return "PBT";
  if (scheduler == "pb2") return "PB2";
  return scheduler;
}

}  // namespace

ReasonContext ReasonContext::load(const ExperimentDb& db) {
  ReasonContext out;
  sqlite3* handle = db.handle();
  Statement spec(handle, "SELECT spec FROM experiment WHERE id = 1");
  Statement state(handle, "SELECT value FROM experiment_state WHERE key = 'scheduler'");
  const Json sweep =
      spec.step() ? sweep_of(Json::parse(spec.column_text(0), nullptr, false)) : Json::object();
  const Json saved = state.step() ? Json::parse(state.column_text(0), nullptr, false) : Json();
  out.scheduler_ = scheduler_type(sweep, saved);
  // ASHA forgets a stopped trial's bracket but keeps its values in the rungs
  // it reached: the highest of those is the one whose cut-off stopped it.
  if (out.scheduler_ == "asha") {
    // Only trial ids and milestones are read: any mode will do.
    for (const auto& bracket : scheduler_state(sweep, saved, Mode::kMin).asha) {
      for (size_t r = 0; r < bracket.rungs.size(); ++r) {  // lowest milestone first
        for (const auto& [trial_id, value] : bracket.rungs[r].recorded) {
          Rung& reached = out.rungs_[trial_id];
          reached.number = std::max<int64_t>(reached.number, static_cast<int64_t>(r) + 1);
          reached.max_t = bracket.rungs.back().milestone;
        }
      }
    }
  }
  Statement exploits(handle,
                     "SELECT trial_id, donor_id, training_iteration, donor_iteration FROM exploits"
                     " ORDER BY id");
  while (exploits.step()) {
    out.last_exploit_[exploits.column_text(0)] =
        fmt::format("exploited trial {} at iteration {} (from its iteration {})",
                    exploits.column_text(1), exploits.column_int(2), exploits.column_int(3));
  }
  return out;
}

std::string ReasonContext::describe(const std::string& trial_id, const std::string& status,
                                    const std::string& reason) const {
  static const std::regex kStopped(R"(^stopped by scheduler .* at iteration (\d+)$)");
  std::smatch match;
  std::string out = reason;
  if (std::regex_match(reason, match, kStopped)) {
    const int64_t iteration = std::stoll(match[1].str());
    out = fmt::format("stopped by {} at iteration {}", display_name(scheduler_), iteration);
    if (auto it = rungs_.find(trial_id); it != rungs_.end()) {
      // At max_t ASHA ends every trial (stop_last_trials): not a cut.
      out = static_cast<double>(iteration) >= it->second.max_t
                ? fmt::format("stopped by ASHA at max_t (iteration {})", iteration)
                : fmt::format("stopped by ASHA at rung {} (iteration {})", it->second.number,
                              iteration);
    }
  }
  if (auto it = last_exploit_.find(trial_id); it != last_exploit_.end()) {
    out = out.empty() ? it->second : out + "; " + it->second;
  }
  return out;
}

}  // namespace tune::dashboard::internal
