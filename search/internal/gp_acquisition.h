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

class Acquisition {
 public:
  // `taken`: the GP inputs of the configs that have run or are running.
  // Holds references to its arguments: they must outlive it.
  Acquisition(const GaussianProcess& gp, double best, const std::vector<Dimension>& dims,
              const Eigen::MatrixXd& taken);

  // Log EI at each row of Q, -inf at a config that has run or is running:
  // it is passed over while another is left. The constant liar lowers a
  // running one's improvement, but a fitted noise can leave it (or the best
  // trial's config) on top, and on a lattice the search would then run the
  // best config again and again: the losses are taken as deterministic, so
  // a repeat learns nothing.
  Eigen::VectorXd score(const Eigen::MatrixXd& Q) const;

  // Refines the numeric inputs, then takes the best single categorical
  // change and refines again, while that raises EI. The candidates flip a
  // categorical only at random and the refinement holds them, so without
  // this a category is rarely tried together with the numeric values that
  // suit it. `value` is log EI at z, and follows it.
  void climb(Eigen::VectorXd& z, double& value) const;

 private:
  bool taken(const Eigen::VectorXd& z) const;
  // Gradient ascent of log EI on the numeric inputs, categoricals held.
  void refine(Eigen::VectorXd& z, double& value) const;
  // One-exchange neighbours: each other value of each categorical dim, the
  // numeric inputs held. Moves z to the best of them when it beats z.
  bool exchange(Eigen::VectorXd& z, double& value) const;

  const GaussianProcess& gp_;
  const double best_;
  const std::vector<Dimension>& dims_;
  const Eigen::MatrixXd& taken_;
  const int D_;
  std::vector<Eigen::Index> numeric_;  // the GP inputs of the numeric dims
  Eigen::Index neighbours_ = 0;        // one-exchange neighbours of any point
};

}  // namespace tune::search::detail
