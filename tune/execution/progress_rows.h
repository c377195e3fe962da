// ProgressRows: the rows the progress table (tune/progress.h) shows of an
// experiment's trials: every trial still in the trial table, and the best
// few of those that left it (TrialTable::retire_finished), so that the
// table's memory stays bounded however many trials finish; the others are
// counted as omitted.
//
// Owned by TrialRuns; not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "tune/execution/trial_table.h"
#include "tune/progress.h"
#include "tune/spec/experiment.h"

namespace tune {

class ProgressRows {
 public:
  explicit ProgressRows(const ExperimentSpec& spec);

  // Keeps the rows of the best of `retired` (just gone from the table).
  void retire(const std::vector<Trial>& retired);
  ProgressSnapshot snapshot(const TrialTable& trials, double elapsed_s) const;

 private:
  const ExperimentSpec& spec_;
  std::vector<std::string> param_columns_;  // the searched keys
  std::vector<TrialRow> finished_rows_;     // the best retired trials, best first, bounded
};

}  // namespace tune
