// TrialCurve: what a simulated rank reports for one trial, as [simulation]
// curve says:
//
//   learning_curve      the learning_curve built-in's model from the config
//                       (train/builtins/learning_curve.h): ceiling, speed
//   crossing, faithful  the families of train/builtins/curve_families.h from the
//                       config's lr, momentum, layers and dropout:
//                       {"accuracy", "loss" = 1 - accuracy}
//   table               the rows of curve_table that the config picks
//                       (train/builtins/curve_table.h): the table's metric columns
//
// A trial runs the config's `iterations` (default 100), or with a table its
// config's rows. An iteration lasts the table's epoch_s where it has one,
// else the config's sleep_s where it sets one, else [simulation]
// iteration_s. Checkpoints and injected failures are the learning_curve
// keys of the config, whatever the curve.
#pragma once

#include <cstdint>
#include <optional>

#include "core/config.h"
#include "train/builtins/curve_families.h"
#include "train/builtins/curve_table.h"
#include "train/builtins/learning_curve.h"
#include "tune/spec/experiment.h"

namespace tune::sim {

class TrialCurve {
 public:
  // `table`: the loaded curve_table, with curve = "table". Throws
  // ConfigError naming a key the config lacks or holds a bad value for, and
  // Error when a table has no rows for the config.
  TrialCurve(const SimulationSpec& simulation, const Config& config, const CurveTable* table);
  TrialCurve() = default;  // learning_curve's defaults

  // The learning_curve keys of the config: checkpoints, failures, sleep_s.
  const train::LearningCurve& keys() const { return keys_; }
  int64_t iterations() const;
  // The metrics of iteration t (1 <= t <= iterations()).
  Json metrics(int64_t t) const;
  // Iteration t's simulated duration, when the table or the config says it
  // (nullopt: [simulation] iteration_s).
  std::optional<double> duration_s(int64_t t) const;

 private:
  train::LearningCurve keys_;
  bool sleep_set_ = false;
  std::optional<CurveFamily> family_;
  FamilyPoint point_;
  const CurveTable::Curve* rows_ = nullptr;
};

}  // namespace tune::sim
