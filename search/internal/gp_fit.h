// GP-BO's model fit: the rows the hyperparameters are fitted on, the
// fit's starts, and the output transform (internal/output_transform.h)
// and hyperparameters chosen together (internal/gp.h says how).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "search/internal/gaussian_process.h"
#include "search/internal/model_based.h"
#include "search/internal/space_encoding.h"
#include "search/searcher_options.h"

namespace tune::search::detail {

// The completed trials the hyperparameters are fitted on: all of them, or
// when there are many, the best and the newest. (Every transform is
// monotone, so the best losses are the best targets.)
std::vector<Eigen::Index> select_fit_rows(const std::vector<double>& losses);

// The fit's `restarts` starts for G lengthscale groups: the last fit's theta
// when it has that shape, the default, then defaults with random
// lengthscales.
std::vector<Eigen::VectorXd> fit_starts(const std::vector<double>& last, int G, int64_t restarts,
                                        Rng& rng);

// An earlier experiment's trials (a warm start) describe the function as
// it was then, and it may have moved since. The configs run in both
// experiments tell by how much: each prior trial is taken as measured with
// an extra noise variance, the mean squared difference of the targets of
// those pairs (none while there is no pair), so this run's trials outweigh
// the prior ones where both speak and the prior ones still shape the rest.
struct Repeats {
  std::vector<Eigen::Index> prior_rows;                      // observations from warm_start
  std::vector<std::pair<Eigen::Index, Eigen::Index>> pairs;  // (prior row, this run's row)
};
Repeats find_repeats(const std::vector<ModelBasedSearcher::Observation>& obs);

// The extra noise variance of each of n observations for `targets`; empty
// when there is none.
Eigen::VectorXd prior_noise(const std::vector<double>& targets, const Repeats& repeats);

// A warm start's model (one objective; internal/gp.h says why): the GP of
// the earlier trials alone (the rows repeats.prior_rows of X, their
// targets, under the per-input `theta` fitted to every trial) is the prior
// mean of this run's function, and the rest of the model is a GP of how
// this run's completed trials (the first `n` rows' others) depart from it,
// standardised: its hyperparameters (one lengthscale per group), fitted
// from `starts` on at most select_fit_rows' share of those trials. Needs at
// least one trial of this run's.
struct Departure {
  PriorMean prior;
  Eigen::VectorXd theta;
  std::vector<Eigen::Index> own;  // this run's rows of X, in order
};
Departure fit_departure(const Eigen::MatrixXd& X, Eigen::Index n,
                        const std::vector<double>& targets, const Repeats& repeats,
                        const Eigen::VectorXd& theta, const std::vector<int>& groups,
                        const std::vector<Eigen::VectorXd>& starts);

// What the hyperparameters are fitted on: the rows of the observations used,
// their GP inputs, which lengthscale each input shares, and the repeats
// that set the prior trials' extra noise.
struct FitData {
  const Eigen::MatrixXd& X;
  const std::vector<Eigen::Index>& rows;
  const std::vector<int>& groups;
  const Repeats& repeats;
};

// The targets the GP fits (one per observation) and its hyperparameters.
struct Model {
  std::vector<double> targets;
  Eigen::VectorXd theta;  // one lengthscale per group, then signal and noise
};

// The targets and hyperparameters for `losses`. For kPower, the lambda of
// the largest evidence, as gp.h says: the log posterior of the fitted theta
// plus the transform's log Jacobian, which makes fits to differently
// transformed losses comparable (a warped GP, Snelson et al. 2004). The
// normal-draws lambda alone ignores where the losses lie: on a bowl it picks
// near a log, and the GP then fits the best trial's cusp with a short
// lengthscale and sees nothing beyond the best basin. Each lambda is fitted
// from the first start; the chosen one then also from the others.
Model fit_model(const FitData& data, const std::vector<double>& losses, OutputTransform kind,
                const std::vector<Eigen::VectorXd>& starts);

}  // namespace tune::search::detail
