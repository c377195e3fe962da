#include "dashboard/experiment_db.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/errors.h"
#include "dashboard/internal/reasons.h"
#include "schedulers/scheduler_state.h"
#include "storage/experiment_store.h"
#include "storage/internal/statement.h"
#include "storage/json_column.h"

namespace tune::dashboard {
namespace {

using storage::internal::Statement;

constexpr int kBusyTimeoutMs = 2000;

Json parse_or_null(const std::string& text) {
  if (text.empty()) return nullptr;
  return storage::parse_json_column(text);  // also reads the store's 1e999 (infinity)
}

void flatten_into(const Json& value, const std::string& prefix, Json& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [key, child] : value.items()) {
      flatten_into(child, prefix.empty() ? key : prefix + "." + key, out);
    }
  } else {
    out[prefix] = value;
  }
}

// Domain kinds whose natural axis is logarithmic (search/domain_spec.h).
bool is_log_domain(const Json& node) {
  if (!node.is_object() || node.size() != 1) return false;
  const std::string& kind = node.begin().key();
  return kind == "loguniform" || kind == "qloguniform" || kind == "lograndint" ||
         kind == "qlograndint";
}

void collect_log_params(const Json& space, const std::string& prefix,
                        std::map<std::string, bool>& out) {
  if (!space.is_object()) return;
  for (const auto& [key, node] : space.items()) {
    const std::string name = prefix.empty() ? key : prefix + "." + key;
    if (is_log_domain(node)) {
      out[name] = true;
    } else if (node.is_object() && !(node.size() == 1 && node.begin().value().is_array())) {
      collect_log_params(node, name, out);
    }
  }
}

}  // namespace

Json sweep_of(const Json& spec) {
  if (spec.is_object() && spec.contains("sweep") && spec["sweep"].is_object()) return spec["sweep"];
  return Json::object();
}

std::string scheduler_type(const Json& sweep, const Json& saved_state) {
  const Json* scheduler = sweep.contains("scheduler") ? &sweep["scheduler"] : nullptr;
  if (scheduler && scheduler->is_object() && scheduler->contains("type") &&
      (*scheduler)["type"].is_string()) {
    return (*scheduler)["type"].get<std::string>();
  }
  if (scheduler && scheduler->is_string()) return scheduler->get<std::string>();
  const std::string saved = schedulers::saved_scheduler_type(saved_state);
  return saved.empty() ? "fifo" : saved;
}

Json scheduler_table(const Json& sweep) {
  if (sweep.contains("scheduler") && sweep["scheduler"].is_object()) return sweep["scheduler"];
  return Json::object();
}

schedulers::SchedulerState scheduler_state(const Json& sweep, const Json& saved_state, Mode mode) {
  Json options = scheduler_table(sweep);
  options.erase("type");  // the options as make_scheduler takes them
  return schedulers::decode_scheduler_state(scheduler_type(sweep, saved_state), options, mode,
                                            saved_state);
}

std::string metric_path(const std::string& metric) {
  std::string escaped;
  for (char c : metric) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return "$.\"" + escaped + "\"";
}

Json flatten(const Json& config) {
  Json out = Json::object();
  if (config.is_object()) flatten_into(config, "", out);
  return out;
}

std::vector<size_t> thin(size_t n, size_t max) {
  std::vector<size_t> out;
  if (n == 0 || max == 0) return out;
  if (n <= max) {
    for (size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  // max - 1 evenly spaced picks from [0, n - 1), then the last one.
  for (size_t k = 0; k + 1 < max; ++k) out.push_back(k * (n - 1) / (max - 1));
  out.push_back(n - 1);
  return out;
}

ExperimentDb ExperimentDb::open(const std::filesystem::path& dir) {
  const std::filesystem::path file = dir / "experiment.db";
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    throw StorageError(fmt::format("no experiment database at {}", file.string()));
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    throw StorageError(fmt::format("{}: cannot open: {}", file.string(), message));
  }
  ExperimentDb out(file, db);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  Statement version(db, "PRAGMA user_version");
  const int64_t v = version.step() ? version.column_int(0) : 0;
  if (v > storage::kSchemaVersion) {
    throw StorageError(fmt::format("{}: schema version {} is newer than this tunerun ({})",
                                   file.string(), v, storage::kSchemaVersion));
  }
  if (v == 0)
    throw StorageError(fmt::format("{}: not a tunerun experiment database", file.string()));
  return out;
}

ExperimentDb::ExperimentDb(ExperimentDb&& other) noexcept
    : path_(std::move(other.path_)), db_(std::exchange(other.db_, nullptr)) {}

ExperimentDb::~ExperimentDb() { sqlite3_close(db_); }

std::string ExperimentDb::fingerprint() const {
  Statement query(db_,
                  "SELECT (SELECT IFNULL(MAX(rowid), 0) FROM results),"
                  " (SELECT IFNULL(MAX(id), 0) FROM trial_events),"
                  " (SELECT IFNULL(MAX(id), 0) FROM exploits),"
                  " (SELECT IFNULL(updated_at, 0) FROM experiment WHERE id = 1),"
                  " (SELECT COUNT(*) FROM checkpoints)");
  query.step();
  return fmt::format("{}-{}-{}-{:.3f}-{}", query.column_int(0), query.column_int(1),
                     query.column_int(2), query.column_double(3), query.column_int(4));
}

std::pair<std::string, std::string> ExperimentDb::objective() const {
  Statement query(db_, "SELECT IFNULL(metric, ''), mode FROM experiment WHERE id = 1");
  if (!query.step()) return {"", "min"};
  return {query.column_text(0), query.column_text(1)};
}

std::vector<TrialPoint> ExperimentDb::trial_points() const {
  // The last result of each trial through the (trial_id, training_iteration) key.
  Statement query(db_,
                  "SELECT t.trial_id, t.status, t.config, r.metrics FROM trials AS t"
                  " LEFT JOIN results AS r ON r.trial_id = t.trial_id AND r.training_iteration ="
                  " (SELECT MAX(training_iteration) FROM results WHERE trial_id = t.trial_id)"
                  " ORDER BY t.trial_index");
  std::vector<TrialPoint> out;
  while (query.step()) {
    out.push_back({query.column_text(0), query.column_text(1),
                   flatten(parse_or_null(query.column_text(2))),
                   parse_or_null(query.column_text(3))});
  }
  return out;
}

std::pair<int64_t, std::vector<TrialPoint>> ExperimentDb::points_at_one_budget(
    const std::string& metric, size_t min_trials) const {
  // abs(Inf) exceeds the largest double: an infinity (1e999) is no value.
  Statement counts(db_,
                   "SELECT training_iteration FROM results"
                   " WHERE json_type(metrics, ?1) IN ('integer', 'real')"
                   " AND abs(json_extract(metrics, ?1)) <= 1.7976931348623157e308"
                   " GROUP BY training_iteration HAVING COUNT(*) >= ?2"
                   " ORDER BY training_iteration DESC LIMIT 1");
  counts.bind(1, metric_path(metric)).bind(2, static_cast<int64_t>(min_trials));
  if (!counts.step()) return {0, {}};
  const int64_t budget = counts.column_int(0);
  Statement query(db_,
                  "SELECT t.trial_id, t.status, t.config, r.metrics FROM results AS r"
                  " JOIN trials AS t ON t.trial_id = r.trial_id"
                  " WHERE r.training_iteration = ?1 ORDER BY t.trial_index");
  query.bind(1, budget);
  std::vector<TrialPoint> out;
  while (query.step()) {
    out.push_back({query.column_text(0), query.column_text(1),
                   flatten(parse_or_null(query.column_text(2))),
                   parse_or_null(query.column_text(3))});
  }
  return {budget, std::move(out)};
}

Json ExperimentDb::summary() const {
  Statement row(db_,
                "SELECT name, IFNULL(metric, ''), mode, spec, created_at, status, updated_at"
                " FROM experiment WHERE id = 1");
  if (!row.step()) throw StorageError(fmt::format("{}: holds no experiment yet", path_.string()));
  Json spec = parse_or_null(row.column_text(3));
  Json out = {{"name", row.column_text(0)},   {"metric", row.column_text(1)},
              {"mode", row.column_text(2)},   {"created_at", row.column_double(4)},
              {"status", row.column_text(5)}, {"updated_at", row.column_double(6)},
              {"fingerprint", fingerprint()}};
  const Json sweep = sweep_of(spec);
  Statement state(db_, "SELECT value FROM experiment_state WHERE key = 'scheduler'");
  out["scheduler"] =
      scheduler_type(sweep, state.step() ? parse_or_null(state.column_text(0)) : Json());
  out["sweep"] = sweep;

  Json counts = Json::object();
  Statement by_status(db_, "SELECT status, COUNT(*) FROM trials GROUP BY status");
  int64_t num_trials = 0;
  while (by_status.step()) {
    counts[by_status.column_text(0)] = by_status.column_int(1);
    num_trials += by_status.column_int(1);
  }
  out["counts"] = counts;
  out["num_trials"] = num_trials;
  // The controller records FINISHED once no trial is left to run, even when
  // every one of them failed: that sweep failed.
  if (out["status"] == "FINISHED" && num_trials > 0 && counts.value("ERROR", 0) == num_trials) {
    out["status"] = "FAILED";
    out["status_note"] = "every trial failed";
  }
  Statement results(db_, "SELECT COUNT(*), MIN(timestamp), MAX(timestamp) FROM results");
  results.step();
  out["num_results"] = results.column_int(0);
  out["last_result_at"] = results.is_null(2) ? Json() : Json(results.column_double(2));

  // Metric names and parameters, from the trials themselves.
  std::map<std::string, bool> log_params;
  if (sweep.contains("param_space")) collect_log_params(sweep["param_space"], "", log_params);
  std::map<std::string, std::vector<Json>> values;
  std::map<std::string, bool> metrics;
  const auto [metric, mode] = objective();
  std::optional<std::pair<double, TrialPoint>> best;
  for (TrialPoint& p : trial_points()) {
    for (const auto& [key, v] : p.config.items()) values[key].push_back(v);
    if (!p.last_metrics.is_object()) continue;
    for (const auto& [key, v] : p.last_metrics.items())
      metrics[key] = metrics[key] || v.is_number();
    // A failed trial's last value is where it broke, not a result.
    if (metric.empty() || p.status == "ERROR" || !p.last_metrics.contains(metric)) continue;
    const Json& v = p.last_metrics[metric];
    if (!v.is_number()) continue;
    const double x = v.get<double>();
    if (!best || (mode == "max" ? x > best->first : x < best->first)) best.emplace(x, std::move(p));
  }
  Json params = Json::array();
  for (auto& [name, vs] : values) {
    const bool varies =
        std::any_of(vs.begin(), vs.end(), [&](const Json& v) { return v != vs[0]; });
    if (!varies && !log_params.contains(name)) continue;
    const bool numeric =
        std::all_of(vs.begin(), vs.end(), [](const Json& v) { return v.is_number(); });
    params.push_back({{"name", name}, {"log", log_params.contains(name)}, {"numeric", numeric}});
  }
  out["params"] = params;
  Json metric_names = Json::array();
  if (!metric.empty()) metric_names.push_back(metric);
  for (const auto& [name, numeric] : metrics) {
    if (numeric && name != metric) metric_names.push_back(name);
  }
  out["metrics"] = metric_names;
  out["best"] = best ? Json{{"trial_id", best->second.trial_id},
                            {"value", best->first},
                            {"status", best->second.status},
                            {"config", best->second.config},
                            {"metrics", best->second.last_metrics}}
                     : Json();
  return out;
}

Json ExperimentDb::trials() const {
  const internal::ReasonContext reasons = internal::ReasonContext::load(*this);
  Statement query(
      db_,
      "SELECT t.trial_id, t.trial_index, t.config, t.status, IFNULL(t.status_reason, ''),"
      " t.last_iteration, t.created_at, t.started_at, t.finished_at, t.num_failures,"
      " IFNULL(t.error, ''), r.metrics, r.time_total_s, r.training_iteration"
      " FROM trials AS t LEFT JOIN results AS r ON r.trial_id = t.trial_id AND"
      " r.training_iteration ="
      " (SELECT MAX(training_iteration) FROM results WHERE trial_id = t.trial_id)"
      " ORDER BY t.trial_index");
  Json out = Json::array();
  while (query.step()) {
    const std::string id = query.column_text(0);
    const std::string status = query.column_text(3);
    out.push_back({{"trial_id", id},
                   {"index", query.column_int(1)},
                   {"config", flatten(parse_or_null(query.column_text(2)))},
                   {"status", status},
                   {"reason", reasons.describe(id, query.column_text(4))},
                   {"iteration", query.is_null(13) ? 0 : query.column_int(13)},
                   {"created_at", query.column_double(6)},
                   {"started_at", query.is_null(7) ? Json() : Json(query.column_double(7))},
                   {"finished_at", query.is_null(8) ? Json() : Json(query.column_double(8))},
                   {"num_failures", query.column_int(9)},
                   {"error", query.column_text(10)},
                   {"metrics", parse_or_null(query.column_text(11))},
                   {"time_total_s", query.is_null(12) ? Json() : Json(query.column_double(12))}});
  }
  return out;
}

}  // namespace tune::dashboard
