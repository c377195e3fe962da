// BohbSearcher: the model half of BOHB (Falkner et al., ICML 2018, "BOHB:
// Robust and Efficient Hyperparameter Optimization at Scale"), as Ray
// Tune's TuneBOHB; HyperBand (schedulers/internal/hyperband.h) is the other half,
// and sweep files require it (`[search] algorithm = "bohb"` with
// `[scheduler] type = "hyperband"`).
//
// A budget is a value of time_attr (training_iteration) at which trials
// report. Every intermediate result is recorded at its budget, and every
// trial's end, so the model knows which trials the scheduler stopped below
// a budget. Each suggestion:
//   - is random with probability random_fraction (BOHB's 1/3), and while
//     no budget has enough results (model_budget() is -1);
//   - else fits the model at the largest budget with enough results: the
//     best top_fraction of its results (at least two) make a joint Parzen
//     estimator l(x), the rest g(x) (TPE's estimator,
//     search/internal/parzen.h: neighbour widths, density kernels, a prior
//     component), and returns, of n_candidates draws from l, the one
//     maximising l(x) / g(x).
//
// Where it departs from BOHB's model, and why. BOHB fits the largest
// budget with min_points_in_model results and ignores the trials stopped
// below it, so its bad group there holds only trials the scheduler
// promoted, all from the promising region, and its first models sit on the
// low budgets that hold many results. Here:
//   - a trial stopped below the model's budget joins g(x) as a loser there,
//     as Optuna's TPE ranks a pruned trial below those that went further,
//     with the weight agreement(r, budget) (search/internal/budget_history.h)
//     of the budget r it stopped at: Kendall's rank agreement, floored at
//     0, of the results at r and at the model's budget over the trials that
//     have both. A rung that ranks trials as the higher budget does passes
//     its verdicts on in full; one that ranks them no better than chance (a
//     learning rate that starts fast and plateaus low) passes on nothing,
//     and the model rests on that budget's own results, as BOHB's does.
//     The weight follows MFES-HB (Li et al., AAAI 2021) and Hyper-Tune (Li
//     et al., VLDB 2022), which weigh each low fidelity by how well it
//     ranks the high-fidelity results (there the weight of a per-budget
//     surrogate in an ensemble; here that of the trials a rung stopped);
//   - "enough results" at a budget: at least 3 there (two for l, one for
//     g) and, counting the trials stopped below it, min_points_in_model.
//     So once trials have been stopped, the model moves to the highest
//     budget with 3 results instead of waiting at a lower one until the
//     higher one has min_points_in_model of its own. Before any trial is
//     stopped (or when none ever is) this is BOHB's rule.
// On benchmarks/multi_fidelity (README, BOHB, has the numbers): with
// faithful rungs the stopped trials keep the model off the regions the
// rungs ruled out, which a bad group of promoted trials alone cannot; with
// misleading rungs the model rests on the higher budget's own results
// instead of a lower budget that holds more of them.
//
// BOHB's paper uses d + 1 points (d dimensions); we ask for d + 2 by
// default so that g always has points too.
//
// Completed trials, running ones and points_to_evaluate are handled by
// ModelBasedSearcher. save() holds every trial's results per budget and
// whether it ended, so restore(save()) gives the same next suggestions.
#pragma once

#include <string>
#include <vector>

#include "search/internal/budget_history.h"
#include "search/internal/model_based.h"

namespace tune::search {

class BohbSearcher final : public ModelBasedSearcher {
 public:
  // Throws ConfigError (key = the option) for an empty time_attr,
  // min_points_in_model 1 or 2 or negative, top_fraction outside (0, 1), random_fraction
  // outside [0, 1] or n_candidates < 1.
  explicit BohbSearcher(BohbOptions options);
  std::string kind() const override { return "bohb"; }

  // The budget the model is fitted at, or -1 when none has enough results.
  double model_budget() const;
  // How many trials have a result at `budget`.
  size_t results_at(double budget) const;
  // The weight a trial stopped at `budget` has in g(x) at model_budget():
  // 0 to 1, 0 when there is no model or `budget` is not below it.
  double stopped_weight(double budget) const;

 private:
  std::vector<double> propose(Rng& rng) override;
  bool ready_for_model() const override;
  void on_intermediate(uint64_t index, const std::vector<double>& x, double loss,
                       const Json& result) override;
  void on_trial_end(uint64_t index) override;
  Json save_model() const override;
  void restore_model(const Json& state) override;
  size_t min_points() const;

  BohbOptions options_;
  detail::BudgetHistory history_;
};

}  // namespace tune::search
