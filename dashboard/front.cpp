// ExperimentDb::front: the trade-offs of an experiment with several
// objectives, for the dashboard's front chart. Every trial whose last
// result holds a value of each objective is a point; the store's
// pareto_front view gives the feasible ones their non-dominated rank (0: the
// front); infeasible ones (their constraints > 0) are points without a rank.
#include <map>

#include "dashboard/experiment_db.h"
#include "storage/statement.h"

namespace tune::dashboard {

using storage::Statement;

Json ExperimentDb::front() const {
  Json out = {{"objectives", Json::array()}, {"points", Json::array()}};
  // A file from before several objectives (schema 1) has neither the
  // objectives table nor the views.
  Statement has_views(db_, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'pareto_front'");
  if (!has_views.step() || has_views.column_int(0) == 0) return out;

  Statement objectives(db_, "SELECT metric, mode FROM objectives ORDER BY position");
  while (objectives.step()) {
    out["objectives"].push_back(
        {{"metric", objectives.column_text(0)}, {"mode", objectives.column_text(1)}});
  }
  const size_t count = out["objectives"].size();
  if (count < 2) return out;  // one objective: the other charts say it all

  std::map<std::string, std::pair<int64_t, double>> ranked;  // trial -> rank, crowding
  Statement ranks(db_, "SELECT trial_id, rank, crowding FROM pareto_front");
  while (ranks.step()) {
    ranked[ranks.column_text(0)] = {ranks.column_int(1), ranks.column_double(2)};
  }

  Statement values(db_,
                   "SELECT trial_id, trial_index, position, value, feasible FROM objective_values"
                   " ORDER BY trial_index, position");
  Json point;
  auto finish = [&] {
    if (point.is_null()) return;
    if (point["values"].size() == count) {  // a value of every objective
      const auto it = ranked.find(point["trial_id"].get<std::string>());
      if (it != ranked.end()) {
        point["rank"] = it->second.first;
        point["crowding"] = it->second.second;
      }
      out["points"].push_back(std::move(point));
    }
    point = Json();
  };
  while (values.step()) {
    const std::string trial_id = values.column_text(0);
    if (point.is_null() || point["trial_id"] != trial_id) {
      finish();
      point = {{"trial_id", trial_id},    {"index", values.column_int(1)},
               {"values", Json::array()}, {"feasible", true},
               {"rank", nullptr},         {"crowding", nullptr}};
    }
    point["values"].push_back(values.column_double(3));
    if (values.column_int(4) == 0) point["feasible"] = false;
  }
  finish();
  return out;
}

}  // namespace tune::dashboard
