// ExperimentDb::scheduler: the scheduler's saved state (experiment_state,
// key 'scheduler', decoded by schedulers/scheduler_state.h) and the exploits
// table, turned into what the page draws.
#include <algorithm>
#include <cmath>
#include <map>

#include "core/errors.h"
#include "dashboard/experiment_db.h"
#include "schedulers/scheduler_state.h"
#include "storage/json_column.h"
#include "storage/saved_state.h"
#include "storage/statement.h"

namespace tune::dashboard {
namespace {

using schedulers::SchedulerState;
using storage::Statement;

// JSON has no NaN or infinity: the page shows null for them.
Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(); }

// Values shown per ASHA rung at most: a 100,000-trial sweep records as many.
constexpr size_t kMaxRecordedShown = 2000;

// ASHA: per bracket, per rung (lowest milestone first) the values recorded
// there in arrival order (at most kMaxRecordedShown, evenly chosen, the
// latest kept; num_recorded and num_below count them all), each with the
// cut-off it was compared with when it arrived, and the cut-off a new
// arrival must beat.
Json asha_rungs(const std::vector<SchedulerState::AshaBracket>& state) {
  Json brackets = Json::array();
  for (const SchedulerState::AshaBracket& bracket : state) {
    Json rungs = Json::array();
    for (const SchedulerState::Rung& rung : bracket.rungs) {
      Json recorded = Json::array();
      for (size_t i : thin(rung.recorded.size(), kMaxRecordedShown)) {
        const auto& [trial_id, value] = rung.recorded[i];
        // [trial, value, cut-off on arrival, below it]
        recorded.push_back({trial_id, number_or_null(value),
                            number_or_null(rung.cutoff_at_arrival.at(i)),
                            static_cast<bool>(rung.below_cutoff.at(i))});
      }
      rungs.push_back(
          {{"milestone", rung.milestone},
           {"recorded", recorded},
           {"num_recorded", rung.recorded.size()},
           {"num_below", std::count(rung.below_cutoff.begin(), rung.below_cutoff.end(), true)},
           {"cutoff", number_or_null(rung.cutoff)}});
    }
    brackets.push_back({{"rungs", rungs}});
  }
  return brackets;
}

// Where each trial got to, as HyperBand's history needs it.
struct Reached {
  double time = 0;  // time_attr at its last result; 0 before one
  std::string status, reason;
};

// What became of a bracket's trials at each of its milestones: who reached
// it, who went on, who was cut there (the scheduler's reason recorded with
// the stop), who finished at the last one, failed, ended on its own or
// still waits.
Json bracket_history(const SchedulerState::HyperBandBracket& b,
                     const std::map<std::string, Reached>& reached) {
  Json history = Json::array();
  for (size_t k = 0; k < b.milestones.size(); ++k) {
    const double m = b.milestones[k];
    const bool last = k + 1 == b.milestones.size();
    Json step = {{"milestone", m}};
    for (const char* key : {"reached", "went_on", "cut", "finished", "failed", "ended", "waiting"})
      step[key] = Json::array();
    for (const std::string& id : b.trials) {
      auto it = reached.find(id);
      if (it == reached.end() || it->second.time < m) continue;
      const Reached& r = it->second;
      step["reached"].push_back(id);
      const char* fate = "waiting";
      if (!last && r.time >= b.milestones[k + 1]) {
        fate = "went_on";
      } else if (r.status == "ERROR") {
        fate = "failed";
      } else if (r.status == "TERMINATED") {
        fate = last ? "finished" : r.reason.starts_with("stopped by scheduler") ? "cut" : "ended";
      }
      step[fate].push_back(id);
    }
    history.push_back(step);
  }
  return history;
}

// HyperBand: each bracket's size, current milestone, live trials and history.
Json hyperband_brackets(const std::vector<SchedulerState::HyperBandBracket>& state,
                        const std::map<std::string, Reached>& reached) {
  Json out = Json::array();
  for (const SchedulerState::HyperBandBracket& b : state) {
    Json live = Json::array();
    for (const SchedulerState::LiveTrial& l : b.live) {
      live.push_back({{"trial_id", l.trial_id},
                      {"time", l.time},
                      {"value", l.value ? number_or_null(*l.value) : Json()}});
    }
    out.push_back({{"band", b.band},
                   {"s", b.s},
                   {"n", b.n},
                   {"milestone", b.milestone},
                   {"halvings", b.halvings},
                   {"n0", b.n0},
                   {"milestones", b.milestones},
                   {"history", bracket_history(b, reached)},
                   {"live", live}});
  }
  return out;
}

// The keys whose values differ between two flat configs: the mutation.
Json diff(const Json& before, const Json& after) {
  Json out = Json::object();
  for (const auto& [key, value] : after.items()) {
    if (!before.contains(key) || before[key] != value) {
      out[key] = {before.contains(key) ? before[key] : Json(), value};
    }
  }
  return out;
}

// Each trial's status, reason and time_attr at its last result.
std::map<std::string, Reached> reached_by(sqlite3* db, std::string time_attr) {
  if (time_attr.empty()) time_attr = "training_iteration";  // HyperBand's default, as Ray's
  Statement query(db,
                  "SELECT t.trial_id, t.status, IFNULL(t.status_reason, ''), r.training_iteration,"
                  " r.time_total_s, r.metrics FROM trials AS t LEFT JOIN results AS r"
                  " ON r.trial_id = t.trial_id AND r.training_iteration ="
                  " (SELECT MAX(training_iteration) FROM results WHERE trial_id = t.trial_id)");
  std::map<std::string, Reached> out;
  while (query.step()) {
    Reached& r = out[query.column_text(0)];
    r.status = query.column_text(1);
    r.reason = query.column_text(2);
    if (query.is_null(3)) continue;
    if (time_attr == "training_iteration") {
      r.time = static_cast<double>(query.column_int(3));
    } else if (time_attr == "time_total_s") {
      r.time = query.column_double(4);
    } else {
      const Json metrics = storage::parse_json_column(query.column_text(5));
      if (metrics.contains(time_attr) && metrics[time_attr].is_number()) {
        r.time = metrics[time_attr].get<double>();
      }
    }
  }
  return out;
}

}  // namespace

Json ExperimentDb::scheduler() const {
  Statement spec(db_, "SELECT spec, mode FROM experiment WHERE id = 1");
  Json sweep = Json::object();
  Mode mode = Mode::kMin;
  if (spec.step()) {
    sweep = sweep_of(Json::parse(spec.column_text(0), nullptr, false));
    mode = mode_from_string(spec.column_text(1)).value_or(Mode::kMin);
  }
  // Assembled from its parts (storage/saved_state.h); unreadable: none.
  Json saved;
  try {
    saved = storage::read_saved_state(db_, "scheduler", path_.string()).value_or(Json());
  } catch (const StorageError&) {
    saved = Json::value_t::discarded;
  }
  Json out = {{"type", scheduler_type(sweep, saved)}, {"options", scheduler_table(sweep)}};
  const SchedulerState state = scheduler_state(sweep, saved, mode);
  if (!state.asha.empty()) out["asha"] = asha_rungs(state.asha);
  if (!state.hyperband.empty()) {
    const Json table = scheduler_table(sweep);
    out["hyperband"] =
        hyperband_brackets(state.hyperband, reached_by(db_, table.value("time_attr", "")));
  }

  Statement exploits(db_,
                     "SELECT e.trial_id, e.donor_id, e.training_iteration, e.donor_iteration,"
                     " e.old_config, e.new_config, e.at, t.trial_index, d.trial_index"
                     " FROM exploits AS e LEFT JOIN trials AS t ON t.trial_id = e.trial_id"
                     " LEFT JOIN trials AS d ON d.trial_id = e.donor_id ORDER BY e.id");
  out["exploits"] = Json::array();
  while (exploits.step()) {
    const Json before = flatten(storage::parse_json_column(exploits.column_text(4)));
    const Json after = flatten(storage::parse_json_column(exploits.column_text(5)));
    out["exploits"].push_back({{"trial_id", exploits.column_text(0)},
                               {"donor_id", exploits.column_text(1)},
                               {"iteration", exploits.column_int(2)},
                               {"donor_iteration", exploits.column_int(3)},
                               {"at", exploits.column_double(6)},
                               {"trial_index", exploits.column_int(7)},
                               {"donor_index", exploits.column_int(8)},
                               {"mutation", diff(before, after)}});
  }
  return out;
}

}  // namespace tune::dashboard
