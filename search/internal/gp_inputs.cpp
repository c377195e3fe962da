#include "search/internal/gp_inputs.h"

#include <algorithm>

namespace tune::search::detail {

int gp_dims(const std::vector<Dimension>& dims) {
  int n = 0;
  for (const auto& dim : dims) {
    n += dim.categorical() ? static_cast<int>(dim.num_choices()) : 1;
  }
  return n;
}

Eigen::VectorXd to_gp(const std::vector<Dimension>& dims, const std::vector<double>& x) {
  Eigen::VectorXd z = Eigen::VectorXd::Zero(gp_dims(dims));
  Eigen::Index at = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d].categorical()) {
      z[at + static_cast<Eigen::Index>(x[d])] = 1;
      at += static_cast<Eigen::Index>(dims[d].num_choices());
    } else {
      z[at++] = x[d];
    }
  }
  return z;
}

std::vector<double> from_gp(const std::vector<Dimension>& dims, const Eigen::VectorXd& z) {
  std::vector<double> x(dims.size());
  Eigen::Index at = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d].categorical()) {
      const auto n = static_cast<Eigen::Index>(dims[d].num_choices());
      Eigen::Index arg;
      z.segment(at, n).maxCoeff(&arg);
      x[d] = static_cast<double>(arg);
      at += n;
    } else {
      x[d] = std::clamp(z[at++], 0.0, 1.0);
    }
  }
  return x;
}

// `z` moved to its lattice point, where the config would run.
Eigen::VectorXd snapped(const SpaceEncoding& encoding, const Eigen::VectorXd& z) {
  return to_gp(encoding.dims(), encoding.snap(from_gp(encoding.dims(), z)));
}

// The GP inputs of the completed trials, then of the running ones.
Eigen::MatrixXd gp_inputs(const std::vector<Dimension>& dims,
                          const std::vector<ModelBasedSearcher::Observation>& completed,
                          const std::vector<ModelBasedSearcher::Observation>& running) {
  const auto n = static_cast<Eigen::Index>(completed.size());
  Eigen::MatrixXd X(n + static_cast<Eigen::Index>(running.size()), gp_dims(dims));
  for (Eigen::Index i = 0; i < n; ++i) X.row(i) = to_gp(dims, completed[i].x).transpose();
  for (size_t i = 0; i < running.size(); ++i) {
    X.row(n + static_cast<Eigen::Index>(i)) = to_gp(dims, running[i].x).transpose();
  }
  return X;
}

std::vector<int> lengthscale_groups(const std::vector<Dimension>& dims) {
  std::vector<int> groups;
  for (size_t d = 0; d < dims.size(); ++d) {
    groups.insert(groups.end(), dims[d].categorical() ? dims[d].num_choices() : 1,
                  static_cast<int>(d));
  }
  return groups;
}

Eigen::VectorXd per_input_theta(const Eigen::VectorXd& fitted, const std::vector<int>& groups) {
  const auto D = static_cast<int>(groups.size());
  Eigen::VectorXd theta(D + 2);
  for (int k = 0; k < D; ++k) theta[k] = fitted[groups[k]];
  theta.tail(2) = fitted.tail(2);
  return theta;
}

}  // namespace tune::search::detail
