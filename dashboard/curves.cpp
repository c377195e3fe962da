// ExperimentDb::curves and ExperimentDb::trial: the per-result queries, the
// only ones whose size grows with the number of results; both thin their
// answers (QueryLimits) so a million-result experiment stays light.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "core/errors.h"
#include "dashboard/experiment_db.h"
#include "dashboard/internal/reasons.h"
#include "storage/json_column.h"
#include "storage/statement.h"

namespace tune::dashboard {
namespace {

using storage::Statement;

Json nullable(const Statement& s, int column) {
  return s.is_null(column) ? Json() : Json(s.column_double(column));
}

std::string tail_of(const std::filesystem::path& file, size_t bytes) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff start =
      std::max<std::streamoff>(0, size - static_cast<std::streamoff>(bytes));
  in.seekg(start);
  std::string text(static_cast<size_t>(size - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (start > 0) {
    const size_t newline = text.find('\n');
    text = newline == std::string::npos ? text : text.substr(newline + 1);
  }
  return text;
}

// A path under the experiment's folder as relative to it ("trials/x_00001"),
// others as they are.
std::string shown_path(const std::filesystem::path& path, const std::filesystem::path& base) {
  const auto relative = path.lexically_relative(base);
  return !relative.empty() && *relative.begin() != ".." ? relative.string() : path.string();
}

}  // namespace

std::filesystem::path ExperimentDb::trial_dir(const std::string& trial_id,
                                              const std::string& stored) const {
  // The controller's layout, found wherever the experiment folder is now: a
  // copied or moved runs/ still reads its own logs, not the old place's.
  const std::filesystem::path experiment = path_.parent_path();
  const std::filesystem::path here = experiment / "trials" / trial_id;
  std::error_code error;
  if (std::filesystem::is_directory(here, error)) return here;
  if (stored.empty()) return {};
  const std::filesystem::path recorded(stored);
  return recorded.is_absolute() ? recorded : experiment / recorded;
}

Json ExperimentDb::curves(const std::string& metric, const QueryLimits& limits,
                          const std::string& mode) const {
  const auto [objective_metric, objective_mode] = objective();
  // An objective ranks by its own mode; another metric by the one asked for.
  std::string direction = mode == "max" ? "max" : "min";
  for (const auto& [name, own] : objectives()) {
    if (name == metric) direction = own;
  }
  const std::string path = metric_path(metric);
  // Each trial's last value of the metric and whether it failed, to rank the
  // trials (failed ones and those without a finite value last); the status
  // and reason of those shown are read after. The experiment metric's is
  // kept in trial_last_result: no result is read.
  const bool kept = kept_last_ && metric == objective_metric;
  Statement ranked(db_, kept ? "SELECT t.trial_id, k.metric_value, t.status = 'ERROR'"
                               " FROM trials AS t"
                               " LEFT JOIN trial_last_result AS k ON k.trial_id = t.trial_id"
                               " ORDER BY t.trial_index"
                             : "SELECT t.trial_id,"
                               " (SELECT json_extract(r.metrics, ?1) FROM results AS r"
                               "  WHERE r.trial_id = t.trial_id"
                               "  ORDER BY r.training_iteration DESC LIMIT 1),"
                               " t.status = 'ERROR'"
                               " FROM trials AS t ORDER BY t.trial_index");
  if (!kept) ranked.bind(1, path);
  struct Row {
    std::string id;
    std::optional<double> last;  // none for a failed trial: where it broke ranks nothing
  };
  std::vector<Row> rows;
  while (ranked.step()) {
    rows.push_back({ranked.column_text(0),
                    ranked.column_int(2) != 0 ? std::nullopt : ranked.column_optional_double(1)});
  }
  const size_t total = rows.size();
  if (rows.size() > limits.max_curve_trials) {
    const double sign = direction == "max" ? -1 : 1;
    std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
      if (!a.last || !std::isfinite(*a.last)) return false;
      if (!b.last || !std::isfinite(*b.last)) return true;
      return sign * *a.last < sign * *b.last;
    });
    rows.resize(limits.max_curve_trials);
  }
  Statement points(db_,
                   "SELECT training_iteration, time_total_s, json_extract(metrics, ?2)"
                   " FROM results WHERE trial_id = ?1 ORDER BY training_iteration");
  Statement about(db_, "SELECT status, IFNULL(status_reason, '') FROM trials WHERE trial_id = ?1");
  Json trials = Json::array();
  for (const Row& row : rows) {
    about.reset();
    about.bind(1, row.id);
    about.step();
    points.reset();
    points.bind(1, row.id).bind(2, path);
    std::vector<std::array<Json, 3>> all;
    while (points.step()) {
      if (points.is_null(2)) continue;
      all.push_back({Json(points.column_int(0)), nullable(points, 1), nullable(points, 2)});
    }
    Json it = Json::array(), time = Json::array(), value = Json::array();
    for (size_t i : thin(all.size(), limits.max_curve_points)) {
      it.push_back(all[i][0]);
      time.push_back(all[i][1]);
      value.push_back(all[i][2]);
    }
    trials.push_back({{"trial_id", row.id},
                      {"status", about.column_text(0)},
                      {"stopped", about.column_text(1).starts_with("stopped by")},
                      {"iteration", it},
                      {"time", time},
                      {"value", value}});
  }
  return {{"metric", metric}, {"mode", direction}, {"total", total}, {"trials", trials}};
}

Json ExperimentDb::trial(const std::string& trial_id, const QueryLimits& limits) const {
  Statement row(
      db_,
      "SELECT trial_index, config, status, IFNULL(status_reason, ''), IFNULL(trial_dir, ''),"
      " created_at, started_at, finished_at, last_iteration, num_failures, IFNULL(error, '')"
      " FROM trials WHERE trial_id = ?1");
  row.bind(1, trial_id);
  if (!row.step()) throw NotFound(fmt::format("no trial {} in {}", trial_id, path_.string()));
  const std::string status = row.column_text(2);
  const std::filesystem::path dir = trial_dir(trial_id, row.column_text(4));
  const internal::ReasonContext reasons = internal::ReasonContext::load(*this);
  Json out = {{"trial_id", trial_id},
              {"index", row.column_int(0)},
              {"config", storage::parse_json_column(row.column_text(1))},
              {"status", status},
              {"reason", reasons.describe(trial_id, row.column_text(3))},
              {"trial_dir", dir.empty() ? "" : shown_path(dir, path_.parent_path())},
              {"created_at", row.column_double(5)},
              {"started_at", nullable(row, 6)},
              {"finished_at", nullable(row, 7)},
              {"last_iteration", row.column_int(8)},
              {"num_failures", row.column_int(9)},
              {"error", row.column_text(10)}};
  // The searcher's suggestion time and model-fit time (schema version 6 on).
  Statement has_times(db_, "SELECT 1 FROM pragma_table_info('trials') WHERE name = 'suggest_s'");
  if (has_times.step()) {
    Statement times(db_, "SELECT suggest_s, model_fit_s FROM trials WHERE trial_id = ?1");
    times.bind(1, trial_id);
    if (times.step()) {
      out["suggest_s"] = nullable(times, 0);
      out["model_fit_s"] = nullable(times, 1);
    }
  }

  Statement results(db_,
                    "SELECT training_iteration, timestamp, time_this_iter_s, time_total_s, metrics"
                    " FROM results WHERE trial_id = ?1 ORDER BY training_iteration");
  results.bind(1, trial_id);
  std::vector<Json> all;
  while (results.step()) {
    all.push_back({{"iteration", results.column_int(0)},
                   {"timestamp", nullable(results, 1)},
                   {"time_this_iter_s", nullable(results, 2)},
                   {"time_total_s", nullable(results, 3)},
                   {"metrics", storage::parse_json_column(results.column_text(4))}});
  }
  Json shown = Json::array();
  for (size_t i : thin(all.size(), limits.max_trial_results)) shown.push_back(std::move(all[i]));
  out["num_results"] = all.size();
  out["results"] = std::move(shown);

  Statement events(db_,
                   "SELECT at, IFNULL(from_status, ''), to_status, IFNULL(reason, '')"
                   " FROM trial_events WHERE trial_id = ?1 ORDER BY id");
  events.bind(1, trial_id);
  out["events"] = Json::array();
  while (events.step()) {
    out["events"].push_back({{"at", events.column_double(0)},
                             {"from", events.column_text(1)},
                             {"to", events.column_text(2)},
                             {"reason", events.column_text(3)}});
  }
  Statement checkpoints(db_,
                        "SELECT training_iteration, path, created_at, source FROM checkpoints"
                        " WHERE trial_id = ?1 ORDER BY training_iteration");
  checkpoints.bind(1, trial_id);
  out["checkpoints"] = Json::array();
  while (checkpoints.step()) {
    out["checkpoints"].push_back({{"iteration", checkpoints.column_int(0)},
                                  {"path", checkpoints.column_text(1)},
                                  {"created_at", checkpoints.column_double(2)},
                                  {"source", checkpoints.column_text(3)}});
  }
  // Only files the controller names rank_N.log inside the trial's own directory.
  out["logs"] = Json::array();
  for (int rank = 0; !dir.empty() && rank < 64; ++rank) {
    const std::filesystem::path file = dir / fmt::format("rank_{}.log", rank);
    std::error_code error;
    if (!std::filesystem::is_regular_file(file, error)) break;
    out["logs"].push_back({{"rank", rank}, {"tail", tail_of(file, limits.log_tail_bytes)}});
  }
  return out;
}

}  // namespace tune::dashboard
