#include "dashboard/experiment_db.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "core/errors.h"
#include "schedulers/scheduler_state.h"
#include "storage/experiment_store.h"
#include "storage/json_column.h"
#include "storage/statement.h"

namespace tune::dashboard {
namespace {

using storage::Statement;

constexpr int kBusyTimeoutMs = 2000;

// summary() reads the parameters and metric names of at most this many
// trials, the first half and the last half by creation order: they vary as
// much in 2,000 trials as in 100,000, and reading them all costs seconds.
constexpr int64_t kSummaryTrials = 2000;

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

// The parameters summary() lists, from the trials' flattened configs: the
// keys whose value varies, and every log domain of the sweep's param_space.
Json params_of(const std::vector<TrialPoint>& points, const Json& sweep) {
  std::map<std::string, bool> log_params;
  if (sweep.contains("param_space")) collect_log_params(sweep["param_space"], "", log_params);
  struct Values {
    Json first;
    bool varies = false;
    bool numeric = true;
  };
  std::map<std::string, Values> values;
  for (const TrialPoint& p : points) {
    for (const auto& [key, v] : p.config.items()) {
      auto [it, added] = values.try_emplace(key, Values{v});
      it->second.varies = it->second.varies || v != it->second.first;
      it->second.numeric = it->second.numeric && v.is_number();
    }
  }
  Json params = Json::array();
  for (const auto& [name, v] : values) {
    if (!v.varies && !log_params.contains(name)) continue;
    params.push_back({{"name", name}, {"log", log_params.contains(name)}, {"numeric", v.numeric}});
  }
  return params;
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

std::string search_algorithm(const Json& sweep) {
  if (sweep.contains("search") && sweep["search"].is_object()) {
    const Json& search = sweep["search"];
    if (search.contains("algorithm") && search["algorithm"].is_string()) {
      return search["algorithm"].get<std::string>();
    }
  }
  return "random";
}

std::string scheduler_name(const Json& sweep, const std::string& type) {
  const Json table = scheduler_table(sweep);
  auto flag = [&](const char* key) {
    return table.contains(key) && table[key].is_boolean() && table[key].get<bool>();
  };
  if (type == "hyperband" && flag("asynchronous")) return "async_hyperband";
  if (type == "hyperband" && flag("for_bohb")) return "hyperband_for_bohb";
  if (type == "median") return "median_stopping_rule";
  return type;
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
  Statement kept(db, "SELECT 1 FROM sqlite_master WHERE name = 'trial_last_result'");
  out.kept_last_ = kept.step();
  return out;
}

ExperimentDb::ExperimentDb(ExperimentDb&& other) noexcept
    : path_(std::move(other.path_)),
      db_(std::exchange(other.db_, nullptr)),
      kept_last_(other.kept_last_) {}

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

std::vector<std::pair<std::string, std::string>> ExperimentDb::objectives() const {
  std::vector<std::pair<std::string, std::string>> out;
  Statement has(db_, "SELECT 1 FROM sqlite_master WHERE name = 'objectives'");
  if (has.step()) {
    Statement rows(db_, "SELECT metric, mode FROM objectives ORDER BY position");
    while (rows.step()) out.emplace_back(rows.column_text(0), rows.column_text(1));
  }
  if (out.empty()) {
    auto [metric, mode] = objective();
    if (!metric.empty()) out.emplace_back(std::move(metric), std::move(mode));
  }
  return out;
}

std::vector<TrialPoint> ExperimentDb::first_and_last_points(int64_t half, bool metrics) const {
  // Through the trial_index index: the trials in between are never read.
  Statement query(
      db_, fmt::format("SELECT t.trial_id, t.status, t.config, {} FROM"
                       " (SELECT id FROM (SELECT rowid AS id FROM trials ORDER BY trial_index"
                       "  LIMIT ?1) UNION SELECT id FROM (SELECT rowid AS id FROM trials"
                       "  ORDER BY trial_index DESC LIMIT ?1))"
                       " JOIN trials AS t ON t.rowid = id {} ORDER BY t.trial_index",
                       metrics ? "r.metrics" : "NULL",
                       metrics ? "LEFT JOIN results AS r ON r.trial_id = t.trial_id"
                                 " AND r.training_iteration = (SELECT MAX(training_iteration)"
                                 " FROM results WHERE trial_id = t.trial_id)"
                               : ""));
  query.bind(1, half);
  std::vector<TrialPoint> out;
  while (query.step()) {
    out.push_back({query.column_text(0), query.column_text(1),
                   flatten(parse_or_null(query.column_text(2))),
                   parse_or_null(query.column_text(3))});
  }
  return out;
}

std::optional<std::pair<double, TrialPoint>> ExperimentDb::best_trial(
    const std::string& metric, const std::string& mode) const {
  if (metric.empty()) return std::nullopt;
  // A failed trial's last value is where it broke, not a result. Ties go to
  // the earlier trial. Only the winner's JSON is parsed. For the experiment
  // metric, trial_last_result holds every trial's last finite value: the
  // best comes from one row a trial, and only the trials holding it are read.
  const bool kept = kept_last_ && metric == objective().first;
  Statement query(
      db_,
      kept ? fmt::format("SELECT t.trial_id, t.status, t.config, r.metrics, k.metric_value"
                         " FROM trial_last_result AS k JOIN trials AS t ON t.trial_id = k.trial_id"
                         " JOIN results AS r ON r.trial_id = k.trial_id"
                         " AND r.training_iteration = k.training_iteration"
                         " WHERE t.status <> 'ERROR' AND k.feasible AND k.metric_value ="
                         " (SELECT b.metric_value FROM trial_last_result AS b JOIN trials AS bt"
                         "  ON bt.trial_id = b.trial_id WHERE b.metric_value IS NOT NULL"
                         "  AND b.feasible AND bt.status <> 'ERROR'"
                         "  ORDER BY b.metric_value {} LIMIT 1)"
                         " ORDER BY t.trial_index LIMIT 1",
                         mode == "max" ? "DESC" : "ASC")
           : std::string(
                 "SELECT t.trial_id, t.status, t.config, r.metrics,"
                 " json_extract(r.metrics, ?1) AS v"
                 " FROM trials AS t CROSS JOIN results AS r ON r.trial_id = t.trial_id"
                 " AND r.training_iteration ="
                 " (SELECT MAX(training_iteration) FROM results WHERE trial_id = t.trial_id)"
                 " WHERE t.status <> 'ERROR' AND json_type(r.metrics, ?1) IN ('integer', 'real')"
                 " AND abs(json_extract(r.metrics, ?1)) <= 1.7976931348623157e308"
                 " AND NOT EXISTS (SELECT 1 FROM json_each(r.metrics, '$.constraints') AS c"
                 "  WHERE c.type NOT IN ('integer', 'real') OR c.value > 0)"
                 " ORDER BY v * ?2, t.trial_index LIMIT 1"));
  if (!kept) {
    query.bind(1, metric_path(metric)).bind(2, static_cast<int64_t>(mode == "max" ? -1 : 1));
  }
  if (!query.step()) return std::nullopt;
  return std::make_pair(query.column_double(4),
                        TrialPoint{query.column_text(0), query.column_text(1),
                                   flatten(parse_or_null(query.column_text(2))),
                                   parse_or_null(query.column_text(3))});
}

namespace {

// SQL true when `metrics` (a results column) holds a finite number under the
// JSON path ?2. abs(Inf) exceeds the largest double: an infinity (1e999) is no value.
constexpr const char* kFiniteValue =
    "json_type(metrics, ?2) IN ('integer', 'real')"
    " AND abs(json_extract(metrics, ?2)) <= 1.7976931348623157e308";

}  // namespace

int64_t ExperimentDb::one_budget(const std::string& metric, size_t min_trials) const {
  // Iterations from the highest down, each counted up to min_trials finite
  // values: through the results_by_iteration index, the highest ones (which
  // have enough, most often) are read and no other.
  Statement below(db_, "SELECT MAX(training_iteration) FROM results WHERE training_iteration < ?1");
  Statement count(db_, fmt::format("SELECT COUNT(*) FROM (SELECT 1 FROM results AS r"
                                   " JOIN trials AS t ON t.trial_id = r.trial_id"
                                   " WHERE r.training_iteration = ?1 AND t.status <> 'ERROR'"
                                   " AND {} LIMIT ?3)",
                                   kFiniteValue));
  const int64_t wanted = static_cast<int64_t>(std::max<size_t>(min_trials, 1));
  int64_t budget = std::numeric_limits<int64_t>::max();
  while (true) {
    below.reset();
    below.bind(1, budget);
    if (!below.step() || below.is_null(0)) return 0;
    budget = below.column_int(0);
    count.reset();
    count.bind(1, budget).bind(2, metric_path(metric)).bind(3, wanted);
    count.step();
    if (count.column_int(0) >= wanted) return budget;
  }
}

std::vector<std::string> ExperimentDb::trials_with_value_at(int64_t iteration,
                                                            const std::string& metric) const {
  Statement query(db_, fmt::format("SELECT r.trial_id FROM results AS r"
                                   " JOIN trials AS t ON t.trial_id = r.trial_id"
                                   " WHERE r.training_iteration = ?1 AND t.status <> 'ERROR'"
                                   " AND {} ORDER BY t.trial_index",
                                   kFiniteValue));
  query.bind(1, iteration).bind(2, metric_path(metric));
  std::vector<std::string> out;
  while (query.step()) out.push_back(query.column_text(0));
  return out;
}

std::vector<TrialPoint> ExperimentDb::points_at(int64_t iteration,
                                                const std::vector<std::string>& trial_ids) const {
  Statement query(db_,
                  "SELECT t.status, t.config, r.metrics FROM results AS r"
                  " JOIN trials AS t ON t.trial_id = r.trial_id"
                  " WHERE r.trial_id = ?1 AND r.training_iteration = ?2");
  std::vector<TrialPoint> out;
  for (const std::string& id : trial_ids) {
    query.reset();
    query.bind(1, id).bind(2, iteration);
    if (!query.step()) continue;
    out.push_back({id, query.column_text(0), flatten(parse_or_null(query.column_text(1))),
                   parse_or_null(query.column_text(2))});
  }
  return out;
}

std::pair<int64_t, std::vector<TrialPoint>> ExperimentDb::points_at_one_budget(
    const std::string& metric, size_t min_trials) const {
  const int64_t budget = one_budget(metric, min_trials);
  if (budget == 0) return {0, {}};
  // The trials' metrics at the budget, finite or not.
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
  // The saved state (megabytes at 100,000 trials) only when the sweep does
  // not name its scheduler.
  std::string type = scheduler_type(sweep, Json());
  if (type == "fifo") {
    Statement state(db_, "SELECT value FROM experiment_state WHERE key = 'scheduler'");
    type = scheduler_type(sweep, state.step() ? parse_or_null(state.column_text(0)) : Json());
  }
  out["scheduler"] = scheduler_name(sweep, type);
  out["search"] = search_algorithm(sweep);
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
  // A full scan of the results for the latest timestamp would cost more
  // than everything else here: the result written last says when. Their
  // number is kept per trial (a count of results scans them all).
  Statement results(
      db_, fmt::format("SELECT ({}),"
                       " (SELECT timestamp FROM results ORDER BY rowid DESC LIMIT 1)",
                       kept_last_ ? "SELECT IFNULL(SUM(num_results), 0) FROM trial_last_result"
                                  : "SELECT COUNT(*) FROM results"));
  results.step();
  out["num_results"] = results.column_int(0);
  out["last_result_at"] = results.is_null(1) ? Json() : Json(results.column_double(1));

  // Metric names and parameters, from the trials themselves (at most
  // kSummaryTrials of them: the first and the last by creation order).
  std::map<std::string, bool> metrics;
  const auto [metric, mode] = objective();
  const std::vector<TrialPoint> points = first_and_last_points(kSummaryTrials / 2, true);
  for (const TrialPoint& p : points) {
    if (!p.last_metrics.is_object()) continue;
    for (const auto& [key, v] : p.last_metrics.items())
      metrics[key] = metrics[key] || v.is_number();
  }
  const auto best = best_trial(metric, mode);
  out["params"] = params_of(points, sweep);
  // The objectives first, in the sweep's order, each with its own best.
  Json metric_names = Json::array();
  out["objectives"] = Json::array();
  for (const auto& [name, objective_mode] : objectives()) {
    metric_names.push_back(name);
    const auto own = name == metric ? best : best_trial(name, objective_mode);
    out["objectives"].push_back(
        {{"metric", name},
         {"mode", objective_mode},
         {"best", own ? Json{{"trial_id", own->second.trial_id}, {"value", own->first}} : Json()}});
  }
  for (const auto& [name, numeric] : metrics) {
    if (numeric &&
        std::find(metric_names.begin(), metric_names.end(), name) == metric_names.end()) {
      metric_names.push_back(name);
    }
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

Json ExperimentDb::params() const {
  Statement row(db_, "SELECT spec FROM experiment WHERE id = 1");
  const Json sweep = sweep_of(row.step() ? parse_or_null(row.column_text(0)) : Json());
  return params_of(first_and_last_points(kSummaryTrials / 2, false), sweep);
}

Json ExperimentDb::trials() const { return trial_rows(0, -1); }

}  // namespace tune::dashboard
