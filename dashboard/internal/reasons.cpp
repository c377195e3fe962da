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
  Statement spec(handle, "SELECT json_extract(spec, '$.scheduler.type') FROM experiment WHERE id = 1");
  if (spec.step()) out.scheduler_ = spec.column_text(0);
  if (out.scheduler_ == "asha") {
    Statement state(handle, "SELECT value FROM experiment_state WHERE key = 'scheduler'");
    if (state.step()) {
      const Json saved = Json::parse(state.column_text(0), nullptr, false);
      if (saved.is_object() && saved.contains("brackets") && saved.contains("trial_bracket")) {
        for (const auto& [trial, b] : saved["trial_bracket"].items()) {
          if (!b.is_number_unsigned() || b.get<size_t>() >= saved["brackets"].size()) continue;
          std::vector<double> milestones;
          for (const Json& rung : saved["brackets"][b.get<size_t>()]) {
            milestones.push_back(rung.value("milestone", 0.0));
          }
          std::sort(milestones.begin(), milestones.end());
          out.rungs_[trial] = milestones;
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
      // The highest rung the trial reached: the one whose cut-off stopped it.
      const auto& m = it->second;
      const auto reached = std::upper_bound(m.begin(), m.end(), static_cast<double>(iteration));
      if (reached != m.begin()) {
        out = fmt::format("stopped by ASHA at rung {} (iteration {})", reached - m.begin(), iteration);
      }
    }
  }
  if (auto it = last_exploit_.find(trial_id); it != last_exploit_.end()) {
    out = out.empty() ? it->second : out + "; " + it->second;
  }
  return out;
}

}  // namespace tune::dashboard::internal
