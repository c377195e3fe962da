// BudgetHistory: what a multi-fidelity searcher (BOHB) knows of its trials:
// each trial's results by budget (a value of time_attr, e.g.
// training_iteration), and whether the trial has ended. A trial that ended
// with its last result below a budget was stopped there by the scheduler
// (or ended on its own), so it has no result at that budget: it is
// "stopped below" it.
//
// Also how faithfully one budget ranks trials against a higher one
// (agreement()), measured on the trials that have results at both: the
// evidence a scheduler's verdict at a low rung carries about a higher one.
//
// Not thread-safe; owned by one searcher.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/config.h"

namespace tune::search::detail {

// Kendall's rank agreement of paired values, ties left out (Goodman and
// Kruskal's gamma): (concordant - discordant) / (concordant + discordant)
// pairs, in [-1, 1]; 0 when no pair is ordered on both sides.
double rank_agreement(const std::vector<std::pair<double, double>>& pairs);

class BudgetHistory {
 public:
  // A result: trial `trial` (the searcher's suggestion index, at `x`)
  // reported `loss` (lower is better) at `budget`. A second result at the
  // same budget replaces the first.
  void record(uint64_t trial, const std::vector<double>& x, double budget, double loss);
  // The trial ended: it reports nothing more. Unknown trials are ignored.
  void end(uint64_t trial);

  // Trials with a result at `budget`, and those stopped below it.
  size_t results_at(double budget) const;
  size_t stopped_below(double budget) const;
  // Budgets with at least one result, ascending.
  std::vector<double> budgets() const;

  // max(0, rank_agreement) of the results at `low` and at `high` over the
  // trials that have both: 1 when `low` orders them as `high` does, 0 when
  // it orders them no better than chance, or worse, or when fewer than two
  // trials have both.
  double agreement(double low, double high) const;

  struct Result {
    const double* x;  // encoded config; valid until the next record()
    double loss;
  };
  // The results at `budget`, in suggestion order.
  std::vector<Result> at(double budget) const;

  struct Stopped {
    const double* x;     // encoded config; valid until the next record()
    double last_budget;  // the budget of its last result
  };
  // The trials stopped below `budget`, in suggestion order.
  std::vector<Stopped> stopped_list(double budget) const;

  // Throws Error when the state is malformed or a point has other than
  // `dims` coordinates.
  Json save() const;
  static BudgetHistory restore(const Json& state, size_t dims);

 private:
  struct Trial {
    std::vector<double> x;
    std::map<double, double> loss_at;  // budget -> loss
    bool ended = false;
  };

  std::map<uint64_t, Trial> trials_;                // by suggestion index
  std::map<double, std::set<uint64_t>> at_budget_;  // budget -> trials with a result there
  std::map<double, size_t> ended_at_;               // last budget -> ended trials
};

}  // namespace tune::search::detail
