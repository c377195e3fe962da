#include "dashboard/report_summaries.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "storage/statement.h"

namespace tune::dashboard {
namespace {

constexpr int64_t kPageTrials = 5000;  // rows read at a time

std::string summary_text(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// A number with 6 significant digits (the shortest text that reads back as
// that rounded value); anything else as it is.
Json rounded(const Json& value) {
  if (!value.is_number_float()) return value;
  const double v = value.get<double>();
  if (!std::isfinite(v)) return value;
  return std::stod(fmt::format("{:.6g}", v));
}

// `values` (an object) as an array in the order of `keys`, new keys
// appended to `keys`; at most `most` entries.
Json aligned(const Json& values, std::vector<std::string>& keys,
             std::map<std::string, size_t>& position, size_t most) {
  Json out = Json::array();
  if (!values.is_object()) return out;
  for (const auto& [key, value] : values.items()) {
    if (!position.contains(key)) {
      position[key] = keys.size();
      keys.push_back(key);
    }
  }
  size_t last = 0;  // one past the last key this row has
  for (const auto& [key, value] : values.items()) last = std::max(last, position[key] + 1);
  last = std::min(last, most);
  for (size_t i = 0; i < last; ++i) {
    auto it = values.find(keys[i]);
    out.push_back(it == values.end() ? Json() : rounded(*it));
  }
  return out;
}

}  // namespace

Summaries report_summaries(const ExperimentDb& db, const std::vector<std::string>& objectives,
                           size_t max_bytes) {
  Summaries out;
  std::vector<std::string> config_keys, metric_keys = objectives;
  std::map<std::string, size_t> config_position, metric_position;
  for (size_t i = 0; i < objectives.size(); ++i) metric_position[objectives[i]] = i;
  std::string rows;
  storage::exec(db.handle(), "BEGIN");  // every page from the same state of the file
  for (int64_t offset = 0;; offset += kPageTrials) {
    const Json page = db.trial_page(offset, kPageTrials);
    for (const Json& t : page["trials"]) {
      const bool trimmed = rows.size() >= max_bytes;
      if (trimmed && !out.trimmed_from) out.trimmed_from = t["index"].get<int64_t>();
      const Json row = {t["trial_id"],
                        t["index"],
                        t["status"],
                        t["iteration"],
                        t["error"],
                        trimmed ? Json("") : t["reason"],
                        aligned(t["config"], config_keys, config_position, std::string::npos),
                        aligned(t["metrics"], metric_keys, metric_position,
                                trimmed ? objectives.size() : std::string::npos)};
      if (!out.ids.empty()) rows += ',';
      rows += summary_text(row);
      out.ids.push_back(t["trial_id"].get<std::string>());
    }
    if (page["trials"].size() < static_cast<size_t>(kPageTrials)) break;
  }
  storage::exec(db.handle(), "COMMIT");
  out.text = fmt::format(R"({{"config_keys":{},"metric_keys":{},"rows":[{}]}})",
                         summary_text(config_keys), summary_text(metric_keys), rows);
  return out;
}

}  // namespace tune::dashboard
