// The trial table's rows and pages (sorted and filtered in SQL, so a
// 100,000-trial table pages through the server), and the trials the charts
// draw, with what changed in them since a fingerprint (a live page fetches
// only that).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "core/errors.h"
#include "dashboard/experiment_db.h"
#include "dashboard/internal/reasons.h"
#include "storage/json_column.h"
#include "storage/statement.h"

namespace tune::dashboard {
namespace {

using storage::Statement;

// A read transaction: the fingerprint and the rows of one answer agree.
class ReadTransaction {
 public:
  // Inside another one already: that one holds.
  explicit ReadTransaction(sqlite3* db) : db_(sqlite3_get_autocommit(db) ? db : nullptr) {
    if (db_) Statement(db_, "BEGIN").step();
  }
  ~ReadTransaction() {
    if (db_) sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  sqlite3* db_;
};

// The fingerprint's first three parts: results, trial_events and exploits
// seen (ExperimentDb::fingerprint()); nullopt for another text.
std::optional<std::array<int64_t, 3>> fingerprint_marks(const std::string& text) {
  std::array<int64_t, 3> out{};
  size_t pos = 0;
  for (int64_t& mark : out) {
    const size_t dash = text.find('-', pos);
    if (dash == std::string::npos || dash == pos) return std::nullopt;
    try {
      size_t used = 0;
      mark = std::stoll(text.substr(pos, dash - pos), &used);
      if (used != dash - pos) return std::nullopt;
    } catch (const std::exception&) {
      return std::nullopt;
    }
    pos = dash + 1;
  }
  return out;
}

// A JSON column's value; null for NULL or "".
Json column_json(const std::string& text) {
  if (text.empty()) return nullptr;
  return storage::parse_json_column(text);  // also reads the store's 1e999 (infinity)
}

Json as_json_array(const std::vector<std::string>& ids) {
  Json out = Json::array();
  for (const auto& id : ids) out.push_back(id);
  return out;
}

int64_t count_of(sqlite3* db, const std::string& sql) {
  Statement count(db, sql);
  count.step();
  return count.column_int(0);
}

}  // namespace

Json ExperimentDb::trial_rows(int64_t offset, int64_t limit) const {
  // The page's trials first, from the trial_index index alone: the skipped
  // ones cost no join.
  return trial_rows_of(
      "SELECT rowid AS page_id FROM trials ORDER BY trial_index LIMIT ?1 OFFSET ?2",
      {limit, offset});
}

Json ExperimentDb::trial_rows_of(const std::string& selection,
                                 const std::vector<Json>& args) const {
  const internal::ReasonContext reasons = internal::ReasonContext::load(*this);
  Statement query(
      db_,
      "SELECT t.trial_id, t.trial_index, t.config, t.status, IFNULL(t.status_reason, ''),"
      " t.last_iteration, t.created_at, t.started_at, t.finished_at, t.num_failures,"
      " IFNULL(t.error, ''), r.metrics, r.time_total_s, r.training_iteration"
      " FROM (" +
          selection +
          ") AS chosen"
          " JOIN trials AS t ON t.rowid = chosen.page_id"
          " LEFT JOIN results AS r ON r.trial_id = t.trial_id AND r.training_iteration = (" +
          last_result_iteration() + ")");
  for (size_t i = 0; i < args.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    if (args[i].is_string()) {
      query.bind(index, args[i].get_ref<const std::string&>());
    } else {
      query.bind(index, args[i].get<int64_t>());
    }
  }
  // Each trial's pauses, [paused at, resumed at or null], from its events
  // (by the trial_events_by_trial index: one seek a row).
  Statement pauses(db_,
                   "SELECT at, to_status = 'PAUSED' FROM trial_events WHERE trial_id = ?1 AND"
                   " (to_status = 'PAUSED' OR from_status = 'PAUSED') AND"
                   " from_status IS NOT to_status ORDER BY id");
  Json out = Json::array();
  while (query.step()) {
    const std::string id = query.column_text(0);
    const std::string status = query.column_text(3);
    Json paused = Json::array();
    if (status != "PENDING") {
      pauses.reset();
      pauses.bind(1, id);
      while (pauses.step()) {
        if (pauses.column_int(1)) {
          paused.push_back(Json::array({pauses.column_double(0), nullptr}));
        } else if (!paused.empty() && paused.back()[1].is_null()) {
          paused.back()[1] = pauses.column_double(0);
        }
      }
    }
    out.push_back({{"trial_id", id},
                   {"index", query.column_int(1)},
                   {"config", flatten(column_json(query.column_text(2)))},
                   {"status", status},
                   {"reason", reasons.describe(id, query.column_text(4))},
                   {"iteration", query.is_null(13) ? 0 : query.column_int(13)},
                   {"created_at", query.column_double(6)},
                   {"started_at", query.is_null(7) ? Json() : Json(query.column_double(7))},
                   {"finished_at", query.is_null(8) ? Json() : Json(query.column_double(8))},
                   {"num_failures", query.column_int(9)},
                   {"error", query.column_text(10)},
                   {"metrics", column_json(query.column_text(11))},
                   {"time_total_s", query.is_null(12) ? Json() : Json(query.column_double(12))}});
    if (!paused.empty()) out.back()["pauses"] = std::move(paused);
  }
  return out;
}

std::string ExperimentDb::last_result_iteration() const {
  return kept_last_ ? "SELECT training_iteration FROM trial_last_result WHERE trial_id = t.trial_id"
                    : "SELECT MAX(training_iteration) FROM results WHERE trial_id = t.trial_id";
}

Json ExperimentDb::trial_page(int64_t offset, int64_t limit, const TrialOrder& order) const {
  offset = std::max<int64_t>(0, offset);
  limit = std::max<int64_t>(0, limit);
  const bool plain = (order.sort.empty() || order.sort == "index") && order.filter.empty();
  if (plain) {  // creation order from the trial_index index alone
    return {{"total", count_of(db_, "SELECT COUNT(*) FROM trials")},
            {"offset", offset},
            {"limit", limit},
            {"trials", limit > 0 ? trial_rows(offset, limit) : Json::array()}};
  }
  std::string key, path;     // the sort key's SQL; a JSON path it reads, bound as ?4
  bool last_result = false;  // the key reads the trial's last result
  if (order.sort == "index" || order.sort.empty()) {
    key = "t.trial_index";
  } else if (order.sort == "trial_id" || order.sort == "status") {
    key = "t." + order.sort;
  } else if (order.sort == "reason") {
    key = "t.status_reason";
  } else if (order.sort == "iteration") {
    key = "r.training_iteration";
    last_result = true;
  } else if (kept_last_ && order.sort == "metric." + objective().first) {
    // The experiment's metric: kept beside each trial's last result, no JSON read.
    key = "(SELECT metric_value FROM trial_last_result WHERE trial_id = t.trial_id)";
  } else if (order.sort.starts_with("metric.")) {
    key = "json_extract(r.metrics, ?4)";
    path = metric_path(order.sort.substr(7));
    last_result = true;
  } else if (order.sort.starts_with("config.")) {
    // Flattened names: "optimizer.name" is config $.optimizer.name.
    path = "$";
    const std::string name = order.sort.substr(7);
    for (size_t pos = 0; pos <= name.size();) {
      const size_t dot = std::min(name.find('.', pos), name.size());
      path += metric_path(name.substr(pos, dot - pos)).substr(1);  // ."part"
      pos = dot + 1;
    }
    key = "json_extract(t.config, ?4)";
  } else {
    throw NotFound(fmt::format("no trial table column '{}' to sort by", order.sort));
  }
  std::string lowered = order.filter;
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // The filter reads the trial's own row (id, status, reason, error,
  // config), not its metrics: a join with every trial's last result would
  // cost more than the rest of the query.
  const std::string where =
      lowered.empty() ? std::string(" WHERE ?1 = ''")
                      : " WHERE instr(lower(t.trial_id || ' ' || t.status || ' ' ||"
                        " IFNULL(t.status_reason, '') || ' ' || IFNULL(t.error, '') || ' ' ||"
                        " t.config), ?1) > 0";
  const std::string from = " FROM trials AS t" +
                           (last_result ? " LEFT JOIN results AS r ON r.trial_id = t.trial_id AND"
                                          " r.training_iteration = (" +
                                              last_result_iteration() + ")"
                                        : std::string()) +
                           where;
  Statement count(db_, "SELECT COUNT(*) FROM trials AS t" + where);
  count.bind(1, lowered);
  count.step();
  const std::string direction = order.descending ? " DESC" : "";
  const std::string selection = "SELECT t.rowid AS page_id" + from + " ORDER BY " + key +
                                " IS NULL, " + key + direction +
                                ", t.trial_index LIMIT ?2 OFFSET ?3";
  std::vector<Json> args = {lowered, limit, offset};
  if (!path.empty()) args.push_back(path);
  return {{"total", count.column_int(0)},
          {"offset", offset},
          {"limit", limit},
          {"sort", order.sort},
          {"desc", order.descending},
          {"filter", order.filter},
          {"trials", limit > 0 ? trial_rows_of(selection, args) : Json::array()}};
}

std::vector<std::string> ExperimentDb::objective_bests() const {
  std::vector<std::string> out;
  for (const auto& [metric, mode] : objectives()) {
    if (const auto best = best_trial(metric, mode)) out.push_back(best->second.trial_id);
  }
  return out;
}

Json ExperimentDb::trial_sample(size_t max) const {
  ReadTransaction transaction(db_);
  const int64_t total = count_of(db_, "SELECT COUNT(*) FROM trials");
  const int64_t most = std::max<int64_t>(1, static_cast<int64_t>(max));
  const int64_t stride = std::max<int64_t>(1, (total + most - 1) / most);
  const std::string fp = fingerprint();
  return {{"total", total},
          {"stride", stride},
          {"fingerprint", fp},
          {"full", true},
          {"trials",
           trial_rows_of("SELECT page_id FROM (SELECT rowid AS page_id, trial_index FROM trials"
                         " WHERE trial_index % ?1 = 0 UNION SELECT rowid, trial_index FROM trials"
                         " WHERE trial_id IN (SELECT value FROM json_each(?2)))"
                         " ORDER BY trial_index",
                         {stride, as_json_array(objective_bests()).dump()})}};
}

Json ExperimentDb::trial_sample_since(size_t max, const std::string& since, int64_t stride) const {
  ReadTransaction transaction(db_);
  const auto marks = fingerprint_marks(since);
  const int64_t total = count_of(db_, "SELECT COUNT(*) FROM trials");
  const int64_t most = std::max<int64_t>(1, static_cast<int64_t>(max));
  const std::string fp = fingerprint();
  const auto now = fingerprint_marks(fp);
  // An exploit deletes results (their rowids may come again) and rewrites
  // configs: the whole sample then, as after any change this cannot follow.
  if (!marks || !now || stride != std::max<int64_t>(1, (total + most - 1) / most) ||
      (*now)[0] < (*marks)[0] || (*now)[1] < (*marks)[1] || (*now)[2] != (*marks)[2]) {
    return trial_sample(max);
  }
  return {
      {"total", total},
      {"stride", stride},
      {"fingerprint", fp},
      {"full", false},
      {"trials", trial_rows_of(
                     // A waiting trial's reason changes with no event ("no free CPUs").
                     "SELECT t.rowid AS page_id FROM trials AS t WHERE (t.trial_id IN"
                     " (SELECT trial_id FROM results WHERE rowid > ?1 UNION"
                     " SELECT trial_id FROM trial_events WHERE id > ?2 UNION"
                     " SELECT trial_id FROM trials WHERE status IN ('PENDING', 'PAUSED')))"
                     " AND (t.trial_index % ?3 = 0 OR t.trial_id IN"
                     " (SELECT value FROM json_each(?4))) ORDER BY t.trial_index",
                     {(*marks)[0], (*marks)[1], stride, as_json_array(objective_bests()).dump()})}};
}

}  // namespace tune::dashboard
