// fANOVA (Hutter, Hoos and Leyton-Brown, "An Efficient Approach for
// Assessing Hyperparameter Importance", ICML 2014) over one regression tree:
// the tree's prediction, a piecewise constant function over a box of the
// parameter space, is split into the variance each parameter's main effect
// (its marginal, the other parameters averaged out uniformly over the box)
// explains and the rest. Optuna's FanovaImportanceEvaluator averages these
// shares over a random forest's trees; importance.cpp does the same over its
// own forest.
#pragma once

#include <Eigen/Dense>
#include <vector>

namespace tune::dashboard::internal {

struct TreeNode {
  int feature = -1;      // the split's feature; -1 for a leaf
  double threshold = 0;  // x[feature] < threshold goes left
  int left = -1;         // children, by index in the tree's node list
  int right = -1;
  double value = 0;  // a leaf's prediction: the mean of its rows
};

// For each feature, the share of the tree's variance over the box [lower,
// upper] that its main effect explains (each in [0, 1]); all zeros when the
// tree is constant there. Node 0 is the root. A feature whose bounds are
// equal explains nothing.
Eigen::VectorXd main_effect_shares(const std::vector<TreeNode>& tree, const Eigen::VectorXd& lower,
                                   const Eigen::VectorXd& upper);

}  // namespace tune::dashboard::internal
