// ExperimentDb::scheduler: the scheduler's saved state (experiment_state,
// key 'scheduler', as AshaScheduler::save and HyperBandScheduler::save write
// it) and the exploits table, turned into what the page draws.
#include <cmath>

#include "dashboard/experiment_db.h"
#include "schedulers/internal/stats.h"
#include "storage/internal/statement.h"
#include "storage/json_column.h"

namespace tune::dashboard {
namespace {

using storage::internal::Statement;

// A saved score is sign * value (max: +1, min: -1); NaN was saved as null.
double score_of(const Json& v) { return v.is_number() ? v.get<double>() : std::nan(""); }

// ASHA: per bracket, per rung (lowest milestone first) the values recorded
// there and the cut-off a new arrival must beat: the (1 - 1/rf) quantile.
Json asha_rungs(const Json& saved, const Json& options, double sign) {
  const double rf = options.value("reduction_factor", 4.0);
  Json brackets = Json::array();
  for (const Json& bracket : saved.value("brackets", Json::array())) {
    Json rungs = Json::array();
    for (auto rung = bracket.rbegin(); rung != bracket.rend(); ++rung) {
      std::vector<double> scores;
      Json recorded = Json::array();
      for (const Json& entry : rung->value("recorded", Json::array())) {
        const double score = score_of(entry.at(1));
        scores.push_back(score);
        recorded.push_back({entry.at(0), std::isnan(score) ? Json() : Json(sign * score)});
      }
      const double cut = scores.empty()
                             ? std::nan("")
                             : schedulers::detail::nanpercentile(scores, (1 - 1 / rf) * 100);
      rungs.push_back({{"milestone", rung->value("milestone", 0.0)},
                       {"recorded", recorded},
                       {"cutoff", std::isnan(cut) ? Json() : Json(sign * cut)}});
    }
    brackets.push_back({{"rungs", rungs}});
  }
  return brackets;
}

// HyperBand: each bracket's size, current milestone and live trials.
Json hyperband_brackets(const Json& saved, double sign) {
  Json out = Json::array();
  for (const Json& b : saved.value("brackets", Json::array())) {
    Json live = Json::array();
    for (const Json& l : b.value("live", Json::array())) {
      const double score = l.size() > 3 ? score_of(l[3]) : std::nan("");
      live.push_back({{"trial_id", l.at(0)},
                      {"time", l.size() > 2 ? l[2] : Json()},
                      {"value", std::isnan(score) ? Json() : Json(sign * score)}});
    }
    out.push_back({{"band", b.value("band", Json())},
                   {"s", b.value("s", Json())},
                   {"n", b.value("n", Json())},
                   {"milestone", b.value("r", Json())},
                   {"halvings", b.value("halves", Json())},
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
  Json options = Json::object();
  std::string mode = "min";
  if (spec.step()) {
    const Json sweep = sweep_of(Json::parse(spec.column_text(0), nullptr, false));
    if (sweep.contains("scheduler") && sweep["scheduler"].is_object()) options = sweep["scheduler"];
    mode = spec.column_text(1);
  }
  Statement state(db_, "SELECT value FROM experiment_state WHERE key = 'scheduler'");
  const Json saved = state.step() ? Json::parse(state.column_text(0), nullptr, false) : Json();
  const std::string type = scheduler_type(Json{{"scheduler", options}}, saved);
  // The scheduler ranks by its own mode when it sets one, else the experiment's.
  if (options.contains("mode") && options["mode"].is_string())
    mode = options["mode"].get<std::string>();
  const double sign = mode == "max" ? 1.0 : -1.0;
  Json out = {{"type", type}, {"options", options}};
  if (saved.is_object() && type == "asha") out["asha"] = asha_rungs(saved, options, sign);
  if (saved.is_object() && type == "hyperband") out["hyperband"] = hyperband_brackets(saved, sign);

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
