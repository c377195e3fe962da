#include "tune/launch/sim/trial_curve.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

namespace tune::sim {
TrialCurve::TrialCurve(const SimulationSpec& simulation, const Config& config,
                       const CurveTable* table)
    : keys_(train::LearningCurve::from_config(config)), sleep_set_(config.contains("sleep_s")) {
  if (simulation.curve == "table") {
    if (table == nullptr) throw Error("curve = \"table\" without a loaded curve table");
    rows_ = &table->curve_for(config);
  } else if (simulation.curve != "learning_curve") {
    family_ = curve_family_from_string(simulation.curve);
    if (!family_)
      throw ConfigError::at_key("simulation.curve", "unknown curve " + simulation.curve);
    point_ = FamilyPoint::from_config(config);
  }
}

int64_t TrialCurve::iterations() const {
  return rows_ ? static_cast<int64_t>(rows_->metrics.size()) : keys_.iterations;
}

Json TrialCurve::metrics(int64_t t) const {
  if (rows_) return rows_->metrics.at(t - 1);
  if (!family_) return keys_.metrics(t);
  const double accuracy = family_accuracy(*family_, point_, t);
  return {{"accuracy", accuracy}, {"loss", 1 - accuracy}};
}

std::optional<double> TrialCurve::duration_s(int64_t t) const {
  if (rows_ && rows_->epoch_s.at(t - 1)) return rows_->epoch_s[t - 1];
  if (sleep_set_) return keys_.sleep_s;
  return std::nullopt;
}

}  // namespace tune::sim
