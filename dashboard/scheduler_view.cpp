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

// Where each trial got to, as HyperBand's history and ASHA's rungs need it.
struct Reached {
  double time = 0;  // time_attr at its last result; 0 before one
  std::string status, reason;
};

// ASHA: per bracket, per rung (lowest milestone first) the values recorded
// there in arrival order (at most kMaxRecordedShown, evenly chosen, the
// latest kept; num_recorded and num_below count them all), each with the
// cut-off it was compared with when it arrived, and the cut-off a new
// arrival must beat; num_reached: the trials whose time_attr got there. ASHA
// records nothing at max_t (a trial there ends), so its top rung is known
// by num_reached alone.
Json asha_rungs(const std::vector<SchedulerState::AshaBracket>& state,
                const std::map<std::string, Reached>& reached) {
  Json brackets = Json::array();
  for (const SchedulerState::AshaBracket& bracket : state) {
    Json rungs = Json::array();
    for (const SchedulerState::Rung& rung : bracket.rungs) {
      const auto num_reached = std::count_if(reached.begin(), reached.end(), [&](const auto& r) {
        return r.second.time >= rung.milestone;
      });
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
           {"num_reached", num_reached},
           {"cutoff", number_or_null(rung.cutoff)}});
    }
    brackets.push_back({{"rungs", rungs}});
  }
  return brackets;
}

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
  const Json table = scheduler_table(sweep);
  const std::string time_attr =
      table.contains("time_attr") && table["time_attr"].is_string() ? table["time_attr"] : "";
  if (!state.asha.empty()) out["asha"] = asha_rungs(state.asha, reached_by(db_, time_attr));
  if (!state.hyperband.empty()) {
    out["hyperband"] = hyperband_brackets(state.hyperband, reached_by(db_, time_attr));
  }

  // The mutation is what the recipient's new config changed from its
  // donor's config then: the donor's latest new config as a recipient
  // before, else its first old config as one after, else its stored config.
  struct Exploit {
    std::string trial_id, donor_id;
    int64_t iteration, donor_iteration, trial_index, donor_index;
    double at;
    Json before, after;  // the recipient's configs, flattened
  };
  Statement exploits(db_,
                     "SELECT e.trial_id, e.donor_id, e.training_iteration, e.donor_iteration,"
                     " e.old_config, e.new_config, e.at, t.trial_index, d.trial_index"
                     " FROM exploits AS e LEFT JOIN trials AS t ON t.trial_id = e.trial_id"
                     " LEFT JOIN trials AS d ON d.trial_id = e.donor_id ORDER BY e.id");
  std::vector<Exploit> all;
  while (exploits.step()) {
    all.push_back({exploits.column_text(0), exploits.column_text(1), exploits.column_int(2),
                   exploits.column_int(3), exploits.column_int(7), exploits.column_int(8),
                   exploits.column_double(6),
                   flatten(storage::parse_json_column(exploits.column_text(4))),
                   flatten(storage::parse_json_column(exploits.column_text(5)))});
  }
  std::map<std::string, std::vector<size_t>> as_recipient;  // trial -> its exploits, in order
  for (size_t i = 0; i < all.size(); ++i) as_recipient[all[i].trial_id].push_back(i);
  Statement stored(db_, "SELECT config FROM trials WHERE trial_id = ?1");
  auto donor_config = [&](size_t i) -> Json {
    const auto it = as_recipient.find(all[i].donor_id);
    if (it != as_recipient.end()) {
      const std::vector<size_t>& own = it->second;
      const auto after = std::upper_bound(own.begin(), own.end(), i);
      if (after != own.begin()) return all[*std::prev(after)].after;
      return all[own.front()].before;
    }
    stored.reset();
    stored.bind(1, all[i].donor_id);
    return stored.step() ? flatten(storage::parse_json_column(stored.column_text(0))) : Json();
  };
  out["exploits"] = Json::array();
  for (size_t i = 0; i < all.size(); ++i) {
    const Exploit& e = all[i];
    out["exploits"].push_back({{"trial_id", e.trial_id},
                               {"donor_id", e.donor_id},
                               {"iteration", e.iteration},
                               {"donor_iteration", e.donor_iteration},
                               {"at", e.at},
                               {"trial_index", e.trial_index},
                               {"donor_index", e.donor_index},
                               {"mutation", diff(donor_config(i), e.after)}});
  }

  if (scheduler_name(sweep, out["type"]) == "median_stopping_rule") {
    // The rule's decisions, as it recorded them with each trial it stopped
    // (or paused: a soft stop).
    Json stopped = Json::array();
    Statement decided(db_,
                      "SELECT trial_id, status, status_reason FROM trials"
                      " WHERE status_reason LIKE '%MedianStoppingRule at %' ORDER BY trial_index");
    while (decided.step()) {
      stopped.push_back({{"trial_id", decided.column_text(0)},
                         {"status", decided.column_text(1)},
                         {"reason", decided.column_text(2)}});
    }
    out["median"] = {{"options", scheduler_table(sweep)}, {"stopped", stopped}};
  }
  return out;
}

}  // namespace tune::dashboard
