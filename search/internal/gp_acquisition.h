// GP-BO's acquisition: log expected improvement under the fitted GP, and
// the moves that climb it from a candidate (gradient steps on the numeric
// inputs, single categorical changes).
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "search/internal/gaussian_process.h"
#include "search/internal/space_encoding.h"

namespace tune::search::detail {

// Log EI of minimisation below `best` at each row of Q.
Eigen::VectorXd log_ei(const GaussianProcess& gp, const Eigen::MatrixXd& Q, double best);

// One constraint's model: a GP of its values, and the value it must not
// exceed on the GP's scale (0 in the trial's own units).
struct ConstraintModel {
  GaussianProcess gp;
  double threshold = 0;
};

// log P(every constraint holds) at each row of Q, the constraints taken as
// independent: the sum of log Phi((threshold - mean) / sd).
Eigen::VectorXd log_feasibility(const std::vector<ConstraintModel>& constraints,
                                const Eigen::MatrixXd& Q);

inline const std::vector<ConstraintModel> kNoConstraints;

class Acquisition {
 public:
  // `taken`: the GP inputs of the configs that have run or are running.
  // `constraints`: with some, the acquisition is log EI plus
  // log_feasibility (EI times the probability of feasibility). Holds
  // references to its arguments: they must outlive it.
  Acquisition(const GaussianProcess& gp, double best, const std::vector<Dimension>& dims,
              const Eigen::MatrixXd& taken,
              const std::vector<ConstraintModel>& constraints = kNoConstraints);

  // The acquisition (log EI, see the constructor) at each row of Q, -inf at a config that has run
  // or is running: it is passed over while another is left. The constant liar lowers a running
  // one's improvement, but a fitted noise can leave it (or the best trial's config) on top, and on
  // a lattice the search would then run the best config again and again: the losses are taken as
  // deterministic, so a repeat learns nothing.
  Eigen::VectorXd score(const Eigen::MatrixXd& Q) const;

  // Refines the numeric inputs, then takes the best single categorical
  // change and refines again, while that raises EI. The candidates flip a
  // categorical only at random and the refinement holds them, so without
  // this a category is rarely tried together with the numeric values that
  // suit it. `value` is log EI at z, and follows it.
  void climb(Eigen::VectorXd& z, double& value) const;

 private:
  bool taken(const Eigen::VectorXd& z) const;
  // The acquisition at each row of Q, taken or not.
  Eigen::VectorXd acquisition_at(const Eigen::MatrixXd& Q) const;
  // Gradient ascent of log EI on the numeric inputs, categoricals held.
  void refine(Eigen::VectorXd& z, double& value) const;
  // One-exchange neighbours: each other value of each categorical dim, the
  // numeric inputs held. Moves z to the best of them when it beats z.
  bool exchange(Eigen::VectorXd& z, double& value) const;

  const GaussianProcess& gp_;
  const double best_;
  const std::vector<Dimension>& dims_;
  const Eigen::MatrixXd& taken_;
  const std::vector<ConstraintModel>& constraints_;
  const int D_;
  std::vector<Eigen::Index> numeric_;  // the GP inputs of the numeric dims
  Eigen::Index neighbours_ = 0;        // one-exchange neighbours of any point
};

}  // namespace tune::search::detail
