// Searchers made by name and options table (as in a sweep file's [search]
// table: make_searcher) or by typed options (tpe(), gp()...: what
// TuneConfig::search_alg takes in C++), so the CLI and the C++ API share one
// path to the same classes.
#pragma once

#include <memory>
#include <string>

#include "search/searcher.h"
#include "search/searcher_options.h"

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
//                              TPE's options (defaults: motpe_defaults()), feasibility,
//                              redraw_share, redraw_ramp, univariate_share
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

// Searcher factories for TuneConfig::search_alg. The model-based ones get an
// unlimited budget (base.num_samples = -1): TuneConfig::num_samples limits.
// Each throws ConfigError for invalid options, as the searcher's constructor does.
std::shared_ptr<Searcher> tpe(TpeOptions options = {});
std::shared_ptr<Searcher> gp(GpOptions options = {});
// BOHB's model; pair it with schedulers::hyperband() (for_bohb or
// asynchronous), whose brackets give it results at several budgets: fit()
// refuses it beside another scheduler, as a sweep file does.
std::shared_ptr<Searcher> bohb(BohbOptions options = {});
// For several objectives (TuneConfig::metric a list).
std::shared_ptr<Searcher> motpe(TpeOptions options = motpe_defaults());
std::shared_ptr<Searcher> nsga2(Nsga2Options options = {});

}  // namespace tune::search
