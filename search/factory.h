// Creates a searcher from its name and an options table (as in a sweep
// file's [search] table), so the CLI and the C++ API share one path.
#pragma once

#include <memory>
#include <string>

#include "search/searcher.h"

namespace tune::search {

struct SearcherContext {
  int64_t num_samples = 1;  // the experiment's num_samples
  uint64_t seed = 0;        // the experiment's seed, unless the options set one
};

// `algorithm`:
//   "random", "basic", "grid"  BasicVariantGenerator: seed, points_to_evaluate
//   "tpe"                      TpeSearcher (search/internal/tpe.h): seed, points_to_evaluate,
//                              n_startup_trials, n_ei_candidates, gamma, gamma_cap,
//                              prior_weight, multivariate, bandwidth ("neighbour" |
//                              "scott"), weighting ("improvement" | "optuna"),
//                              constant_liar
//   "gp", "bayesopt"           GpSearcher (search/internal/gp.h), one objective or several
//                              (ParEGO): seed, points_to_evaluate,
//                              n_startup_trials, n_candidates, fit_restarts,
//                              output_transform ("power" | "rank" | "standardise"),
//                              trust_region_dims
//   "motpe"                    MotpeSearcher (search/internal/motpe.h), several objectives:
//                              TPE's options (defaults: motpe_defaults())
//   "nsga2"                    Nsga2Searcher (search/internal/nsga2.h), several objectives:
//                              seed, points_to_evaluate, population_size, crossover_prob,
//                              mutation_prob, swapping_prob, crossover ("sbx" | "uniform"),
//                              eta_crossover, eta_mutation
//   "bohb"                     BohbSearcher (search/internal/bohb.h): seed, points_to_evaluate,
//                              time_attr, min_points_in_model, top_fraction,
//                              random_fraction, n_candidates (pair it with HyperBand)
// Every algorithm also takes the wrapper options
//   repeat = k          Repeater: each config runs k times, the mean is reported
//                       (num_samples must be a multiple of k)
//   max_concurrent = n  ConcurrencyLimiter: at most n live trials
// `options`: a JSON object of those options. Model-based searchers suggest
// num_samples configs in all. Throws tune::ConfigError with key() naming the
// offending option, for an unknown algorithm (key "algorithm") or an unknown
// or invalid option.
std::unique_ptr<Searcher> make_searcher(const std::string& algorithm, const Json& options,
                                        const SearcherContext& context);

}  // namespace tune::search
