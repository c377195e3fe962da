#include "dashboard/internal/fanova.h"

#include <algorithm>

namespace tune::dashboard::internal {
namespace {

struct Leaf {
  Eigen::VectorXd lo, hi;  // its box
  double value = 0;
};

void collect(const std::vector<TreeNode>& tree, int node, Eigen::VectorXd& lo, Eigen::VectorXd& hi,
             std::vector<Leaf>& out) {
  const TreeNode& n = tree[static_cast<size_t>(node)];
  if (n.feature < 0) {
    out.push_back({lo, hi, n.value});
    return;
  }
  const double old_hi = hi[n.feature], old_lo = lo[n.feature];
  hi[n.feature] = std::min(old_hi, n.threshold);
  collect(tree, n.left, lo, hi, out);
  hi[n.feature] = old_hi;
  lo[n.feature] = std::max(old_lo, n.threshold);
  collect(tree, n.right, lo, hi, out);
  lo[n.feature] = old_lo;
}

}  // namespace

Eigen::VectorXd main_effect_shares(const std::vector<TreeNode>& tree, const Eigen::VectorXd& lower,
                                   const Eigen::VectorXd& upper) {
  const Eigen::Index d = lower.size();
  Eigen::VectorXd out = Eigen::VectorXd::Zero(d);
  if (tree.empty()) return out;
  std::vector<Leaf> leaves;
  Eigen::VectorXd lo = lower, hi = upper;
  collect(tree, 0, lo, hi, leaves);
  const Eigen::VectorXd width = upper - lower;
  // Each leaf's share of the box (a feature with no width counts as whole).
  std::vector<double> volume(leaves.size(), 1.0);
  for (size_t l = 0; l < leaves.size(); ++l) {
    for (Eigen::Index f = 0; f < d; ++f) {
      if (width[f] > 0) volume[l] *= std::max(0.0, leaves[l].hi[f] - leaves[l].lo[f]) / width[f];
    }
  }
  double mean = 0;
  for (size_t l = 0; l < leaves.size(); ++l) mean += volume[l] * leaves[l].value;
  double total = 0;
  for (size_t l = 0; l < leaves.size(); ++l) {
    total += volume[l] * (leaves[l].value - mean) * (leaves[l].value - mean);
  }
  if (!(total > 1e-300)) return out;
  for (Eigen::Index f = 0; f < d; ++f) {
    if (!(width[f] > 0)) continue;
    // The feature's cut points: the marginal is constant between them.
    std::vector<double> points = {lower[f], upper[f]};
    for (const TreeNode& n : tree) {
      if (n.feature == f && n.threshold > lower[f] && n.threshold < upper[f]) {
        points.push_back(n.threshold);
      }
    }
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    const size_t intervals = points.size() - 1;
    // The marginal on each interval: every leaf over it, weighted by its
    // share of the other features' box (a difference array over intervals).
    std::vector<double> marginal(intervals + 1, 0.0);
    for (size_t l = 0; l < leaves.size(); ++l) {
      const double own = (leaves[l].hi[f] - leaves[l].lo[f]) / width[f];
      if (!(own > 0)) continue;
      const auto at = [&](double x) {
        return static_cast<size_t>(std::lower_bound(points.begin(), points.end(), x) -
                                   points.begin());
      };
      const size_t begin = at(leaves[l].lo[f]), end = at(leaves[l].hi[f]);
      const double weight = leaves[l].value * volume[l] / own;
      marginal[begin] += weight;
      marginal[end] -= weight;
    }
    double running = 0, variance = 0;
    for (size_t k = 0; k < intervals; ++k) {
      running += marginal[k];
      const double share = (points[k + 1] - points[k]) / width[f];
      variance += share * (running - mean) * (running - mean);
    }
    out[f] = std::clamp(variance / total, 0.0, 1.0);
  }
  return out;
}

}  // namespace tune::dashboard::internal
