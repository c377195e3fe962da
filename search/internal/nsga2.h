// Nsga2Searcher: NSGA-II (Deb et al. 2002), the multi-objective genetic
// algorithm Optuna's NSGAIISampler runs, in a steady-state form that suits
// trials completing one at a time.
//
// The first population_size configs are random. Each later one is a child:
// the population is the population_size best completed trials, by
// non-dominated rank (constrained domination, core/pareto.h: a feasible
// trial beats an infeasible one, and infeasible ones compare by total
// violation) and then crowding distance; two parents come from binary
// tournaments on the same order; with crossover_prob they cross (numeric
// parameters by SBX, or uniform swaps; choices by uniform swaps), else the
// child copies the first; then each parameter mutates with mutation_prob
// (numeric ones by polynomial mutation, choices by a fresh uniform draw).
// Everything happens on the encoded [0, 1] scale (search/internal/
// space_encoding.h), so log and integer parameters cross on their own scale.
//
// Differences from Optuna 3.1, each measured by benchmarks/multi_objective:
// Optuna breeds generation g from the elite of generation g - 1 only.
// Numeric parameters cross by uniform swaps (crossover = "uniform", the
// default, Optuna's): a child takes each coordinate from one parent, so
// coordinates good in different trials meet. SBX (crossover = "sbx") makes
// children between and around their parents instead; over 20 seeds of 200
// trials it trailed uniform swaps on five of the six problems of the first
// family and six of the eight of --hard, by most on the multimodal ZDT4
// (median hypervolume 105.5 against 119.6; docs/benchmarks.md).
#pragma once

#include "search/internal/model_based.h"

namespace tune::search {

class Nsga2Searcher final : public ModelBasedSearcher {
 public:
  // Throws ConfigError (key = the option) for population_size < 2, a
  // probability above 1 (crossover_prob, swapping_prob, mutation_prob) or
  // a negative one (but mutation_prob's "< 0: 1 / parameters"), or a
  // negative eta.
  explicit Nsga2Searcher(Nsga2Options options);
  std::string kind() const override { return "nsga2"; }

 private:
  bool handles_several_objectives() const override { return true; }
  std::vector<double> propose(Rng& rng) override;

  Nsga2Options options_;
};

}  // namespace tune::search
