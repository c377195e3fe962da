// GP-BO's inputs: a config's encoding (internal/space_encoding.h) as the
// GP sees it, numeric dims as they are and categorical ones one-hot, and
// the lengthscale each input shares.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "search/internal/model_based.h"
#include "search/internal/space_encoding.h"

namespace tune::search::detail {

// The number of GP inputs: numeric dims as they are, categorical ones one-hot.
int gp_dims(const std::vector<Dimension>& dims);

// An encoded config as GP inputs, and back (a categorical's value the
// largest of its one-hot coordinates; numeric ones clamped into [0, 1]).
Eigen::VectorXd to_gp(const std::vector<Dimension>& dims, const std::vector<double>& x);
std::vector<double> from_gp(const std::vector<Dimension>& dims, const Eigen::VectorXd& z);

// `z` moved to its lattice point, where the config would run.
Eigen::VectorXd snapped(const SpaceEncoding& encoding, const Eigen::VectorXd& z);

// The GP inputs of the completed trials, then of the running ones.
Eigen::MatrixXd gp_inputs(const std::vector<Dimension>& dims,
                          const std::vector<ModelBasedSearcher::Observation>& completed,
                          const std::vector<ModelBasedSearcher::Observation>& running);

// One lengthscale per searchable dimension: a categorical's one-hot inputs
// share one, so the kernel sees how many categoricals differ (a Hamming
// distance, as Optuna's GPSampler and BoTorch's mixed GP do) rather than
// fitting a lengthscale per value. Entry k is GP input k's dimension.
std::vector<int> lengthscale_groups(const std::vector<Dimension>& dims);

// The GP's theta from the fitted one: each input's group's lengthscale,
// then signal and noise.
Eigen::VectorXd per_input_theta(const Eigen::VectorXd& fitted, const std::vector<int>& groups);

}  // namespace tune::search::detail
