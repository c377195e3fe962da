// PB2: Population Based Bandits (Parker-Holder et al., NeurIPS 2020), as Ray
// Tune's PB2: PBT whose explore step picks the recipient's new values of the
// hyperparam_bounds keys with a time-varying GP bandit instead of random
// perturbation.
//
// At every perturbation point PB2 records (trial, time, values, score). To
// explore, it turns these into improvement rates: for consecutive records of
// one trial with unchanged values, y = (score - previous) / (time - previous
// time), inputs (time, score before, values). A GP with the time-varying
// kernel (internal/tv_gp.h) is fitted on the normalised data (times and
// scores by their range, values by their bounds, y standardised and clipped
// to +-2), and the values maximising UCB at the donor's (time, score) are
// chosen; trials already given values since the last new time count as
// observed with y = 0, spreading the batch (Desautels et al. 2014). The
// recipient then gets a record at the donor's time and score, so its next
// improvement is measured from where it starts.
//
// Differences from Ray, for speed and no Python: the GP uses the last 200
// rates (Ray cross-validates a length when it has 200 or more, up to 1000),
// Nelder-Mead replaces L-BFGS-B, and the second GP (for the batch) reuses
// the first one's parameters instead of fitting its own. Values become
// float32 then, for integer config values, integers, as in Ray.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "schedulers/internal/pbt.h"

namespace tune::schedulers {

class Pb2Scheduler final : public PbtScheduler {
 public:
  // Throws ConfigError naming the option (hyperparam_bounds.KEY for a bad bound).
  explicit Pb2Scheduler(Pb2Options options);
  std::string kind() const override { return "pb2"; }

 protected:
  void on_perturbation_point(const std::string& trial_id, double time, double score,
                             const Json& config) override;
  Json explore(const std::string& recipient, const std::string& donor,
               const Json& donor_config) override;
  Json save_extra() const override;
  void restore_extra(const Json& state) override;

 private:
  struct Record {
    std::string trial;
    double time;
    std::vector<double> values;  // one per bound, in bounds_ order
    double score;
  };

  std::vector<std::pair<std::string, std::pair<double, double>>> bounds_;
  std::vector<Record> data_;
  std::vector<std::vector<double>> current_;  // values chosen since the last new time
  double last_exploration_time_ = 0;
};

}  // namespace tune::schedulers
