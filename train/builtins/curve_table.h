// CurveTable: tabulated learning curves ([simulation] curve = "table",
// curve_table = "curves.csv"), replayed by simulated ranks
// (tune/launch/sim/trial_curve.h). A CSV file, one row per config and epoch:
//
//   lr,layers,epoch,accuracy,loss,epoch_s
//   0.01,2,1,0.412,0.588,31.5
//   0.01,2,2,0.530,0.470,30.9
//
// The columns before `epoch` are the config's parameters (dotted names
// reach nested tables: "model.width"), the columns after it the metrics a
// trial reports, except `epoch_s`, which (when there) is that epoch's
// simulated duration in seconds. A trial's config picks its rows by exact
// match of every parameter column: numbers as numbers (0.010 matches 0.01),
// anything else as text; its iteration t reports its t-th row by epoch.
//
// The format is plain CSV: fields separated by commas, no quoting (a field
// holds no comma, quote or line break), surrounding spaces ignored, blank
// lines and lines starting with '#' skipped. Epochs are integers, unique per
// config; metric and epoch_s cells are numbers (epoch_s >= 0).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/config.h"

namespace tune::sim {

class CurveTable {
 public:
  // One config's curve: its rows in epoch order.
  struct Curve {
    std::vector<Json> metrics;                   // per row: metric column -> value
    std::vector<std::optional<double>> epoch_s;  // per row, when the table has the column
  };

  // Reads `file`. Throws Error whose message starts "FILE:LINE:COLUMN: "
  // for a malformed cell or row (columns count from 1, in characters), and
  // "FILE: " when the file cannot be read or its header lacks `epoch` or a
  // metric.
  static CurveTable load(const std::filesystem::path& file);

  const std::filesystem::path& file() const { return file_; }
  const std::vector<std::string>& parameters() const { return parameters_; }
  const std::vector<std::string>& metric_names() const { return metrics_; }
  size_t num_configs() const { return curves_.size(); }

  // The curve of a trial's config. Throws ConfigError naming the parameter a
  // config lacks, or Error naming the config and the file when no row
  // matches it.
  const Curve& curve_for(const Config& config) const;
  // Whether parameter column `column` holds `value` in some row (as
  // curve_for matches it).
  bool column_holds(size_t column, const Json& value) const;

 private:
  std::filesystem::path file_;
  std::vector<std::string> parameters_;
  std::vector<std::string> metrics_;
  std::map<std::string, Curve> curves_;        // by the parameter values' key
  std::vector<std::set<std::string>> values_;  // per parameter column, as the key spells them
};

}  // namespace tune::sim
