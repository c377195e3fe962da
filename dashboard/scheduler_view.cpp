// ExperimentDb::scheduler: the scheduler's saved state (experiment_state,
// key 'scheduler', decoded by schedulers/scheduler_state.h) and the exploits
// table, turned into what the page draws.
#include <cmath>

#include "dashboard/experiment_db.h"
#include "schedulers/scheduler_state.h"
#include "storage/internal/statement.h"
#include "storage/json_column.h"

namespace tune::dashboard {
namespace {

using schedulers::SchedulerState;
using storage::internal::Statement;

// JSON has no NaN or infinity: the page shows null for them.
Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(); }

// ASHA: per bracket, per rung (lowest milestone first) the values recorded
// there and the cut-off a new arrival must beat.
Json asha_rungs(const std::vector<SchedulerState::AshaBracket>& state) {
  Json brackets = Json::array();
  for (const SchedulerState::AshaBracket& bracket : state) {
    Json rungs = Json::array();
    for (const SchedulerState::Rung& rung : bracket.rungs) {
      Json recorded = Json::array();
      for (const auto& [trial_id, value] : rung.recorded) {
        recorded.push_back({trial_id, number_or_null(value)});
      }
      rungs.push_back({{"milestone", rung.milestone},
                       {"recorded", recorded},
                       {"cutoff", number_or_null(rung.cutoff)}});
    }
    brackets.push_back({{"rungs", rungs}});
  }
  return brackets;
}

// HyperBand: each bracket's size, current milestone and live trials.
Json hyperband_brackets(const std::vector<SchedulerState::HyperBandBracket>& state) {
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

}  // namespace

Json ExperimentDb::scheduler() const {
  Statement spec(db_, "SELECT spec, mode FROM experiment WHERE id = 1");
  Json sweep = Json::object();
  Mode mode = Mode::kMin;
  if (spec.step()) {
    sweep = sweep_of(Json::parse(spec.column_text(0), nullptr, false));
    mode = mode_from_string(spec.column_text(1)).value_or(Mode::kMin);
  }
  Statement saved_row(db_, "SELECT value FROM experiment_state WHERE key = 'scheduler'");
  const Json saved =
      saved_row.step() ? Json::parse(saved_row.column_text(0), nullptr, false) : Json();
  Json out = {{"type", scheduler_type(sweep, saved)}, {"options", scheduler_table(sweep)}};
  const SchedulerState state = scheduler_state(sweep, saved, mode);
  if (!state.asha.empty()) out["asha"] = asha_rungs(state.asha);
  if (!state.hyperband.empty()) out["hyperband"] = hyperband_brackets(state.hyperband);

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
