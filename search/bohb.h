// BohbSearcher: the model half of BOHB (Falkner et al., ICML 2018, "BOHB:
// Robust and Efficient Hyperparameter Optimization at Scale"), as Ray
// Tune's TuneBOHB; HyperBand (schedulers/hyperband.h) is the other half,
// and sweep files require it (`[search] algorithm = "bohb"` with
// `[scheduler] type = "hyperband"`).
//
// A budget is a value of time_attr (training_iteration) at which trials
// report. Every intermediate result is recorded at its budget, so trials
// that HyperBand stops at a milestone still teach the model what their
// region is worth there. Each suggestion:
//   - is random with probability random_fraction (BOHB's 1/3), and while
//     no budget has min_points_in_model results;
//   - else fits the model on the largest budget with at least
//     min_points_in_model results: the best top_fraction of them (at least
//     two) make a joint Parzen estimator l(x), the rest g(x) (TPE's
//     estimator, search/internal/parzen.h: neighbour widths, density
//     kernels, a prior component), and returns, of n_candidates draws from
//     l, the one maximising l(x) / g(x).
// The largest budget is the most faithful to the final metric; lower ones
// hold more points sooner. BOHB's paper uses d + 1 points (d dimensions);
// we ask for d + 2 by default so that g always has points too.
//
// Completed trials, running ones and points_to_evaluate are handled by
// ModelBasedSearcher. save() holds every trial's results per budget, so
// restore(save()) gives the same next suggestions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "search/model_based.h"

namespace tune::search {

class BohbSearcher final : public ModelBasedSearcher {
 public:
  // Throws ConfigError (key = the option) for an empty time_attr,
  // min_points_in_model 1 or 2 or negative, top_fraction outside (0, 1), random_fraction
  // outside [0, 1] or n_candidates < 1.
  explicit BohbSearcher(BohbOptions options);

  // The largest budget with enough results for the model, or -1 when none.
  double model_budget() const;
  // How many trials have a result at `budget`.
  size_t results_at(double budget) const;

 private:
  struct Trial {
    std::vector<double> x;
    std::map<double, double> loss_at;  // budget -> loss
  };

  std::vector<double> propose(Rng& rng) override;
  bool ready_for_model() const override;
  void on_intermediate(uint64_t index, const std::vector<double>& x, double loss,
                       const Json& result) override;
  Json save_model() const override;
  void restore_model(const Json& state) override;
  size_t min_points() const;

  BohbOptions options_;
  std::map<uint64_t, Trial> trials_;  // by suggestion index
  std::map<double, size_t> counts_;   // budget -> trials with a result there
};

}  // namespace tune::search
