#include "search/factory.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "core/errors.h"
#include "search/internal/basic_variant.h"
#include "search/internal/bohb.h"
#include "search/internal/concurrency_limiter.h"
#include "search/internal/gp.h"
#include "search/internal/motpe.h"
#include "search/internal/nsga2.h"
#include "search/internal/repeater.h"
#include "search/internal/tpe.h"

namespace tune::search {
namespace {

constexpr const char* kKnownAlgorithms =
    "random, basic, grid, tpe, gp, bayesopt, bohb, motpe, nsga2";

// Typed reads of an options table that remember which keys were read, so
// finish() can name the first unknown one.
class OptionReader {
 public:
  OptionReader(const std::string& algorithm, const Json& options)
      : algorithm_(algorithm), options_(options.is_null() ? Json::object() : options) {}

  const Json* find(const std::string& key) {
    known_.push_back(key);
    auto it = options_.find(key);
    return it == options_.end() ? nullptr : &*it;
  }

  void read(const std::string& key, uint64_t& out) {
    if (const Json* v = find(key)) {
      if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<int64_t>() < 0)) {
        throw ConfigError::at_key(key, "expected a non-negative integer, got " + v->dump());
      }
      out = v->get<uint64_t>();
    }
  }

  void read(const std::string& key, int64_t& out) {
    if (const Json* v = find(key)) {
      if (!v->is_number_integer()) {
        throw ConfigError::at_key(key, "expected an integer, got " + v->dump());
      }
      out = v->get<int64_t>();
    }
  }

  void read(const std::string& key, double& out) {
    if (const Json* v = find(key)) {
      if (!v->is_number()) throw ConfigError::at_key(key, "expected a number, got " + v->dump());
      out = v->get<double>();
    }
  }

  void read(const std::string& key, bool& out) {
    if (const Json* v = find(key)) {
      if (!v->is_boolean())
        throw ConfigError::at_key(key, "expected true or false, got " + v->dump());
      out = v->get<bool>();
    }
  }

  // A string option that must be one of `names`; `out` gets its index.
  template <typename Enum>
  void read_choice(const std::string& key, const std::vector<std::string>& names, Enum& out) {
    if (const Json* v = find(key)) {
      const auto it = v->is_string() ? std::find(names.begin(), names.end(), v->get<std::string>())
                                     : names.end();
      if (it == names.end()) {
        throw ConfigError::at_key(key, fmt::format("expected one of \"{}\", got {}",
                                                   fmt::join(names, "\", \""), v->dump()));
      }
      out = static_cast<Enum>(it - names.begin());
    }
  }

  void read_points(std::vector<Json>& out) {
    if (const Json* v = find("points_to_evaluate")) {
      if (!v->is_array()) {
        throw ConfigError::at_key("points_to_evaluate",
                                  "expected an array of tables, got " + v->dump());
      }
      for (const Json& point : *v) {
        if (!point.is_object()) {
          throw ConfigError::at_key("points_to_evaluate",
                                    "expected an array of tables, got element " + point.dump());
        }
        out.push_back(point);
      }
    }
  }

  void finish() const {
    for (const auto& [key, value] : options_.items()) {
      if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
        throw ConfigError::at_key(key, fmt::format("unknown option for searcher '{}'; known: {}",
                                                   algorithm_, fmt::join(known_, ", ")));
      }
    }
  }

 private:
  std::string algorithm_;
  Json options_;
  std::vector<std::string> known_;
};

// The budget, seed and points_to_evaluate; with `startup`, n_startup_trials.
ModelBasedOptions model_based_options(OptionReader& r, int64_t num_samples, uint64_t seed,
                                      bool startup = true) {
  ModelBasedOptions out;
  out.num_samples = num_samples;
  out.seed = seed;
  r.read("seed", out.seed);
  r.read_points(out.points_to_evaluate);
  if (startup) r.read("n_startup_trials", out.n_startup_trials);
  return out;
}

std::unique_ptr<Searcher> make_inner(const std::string& algorithm, OptionReader& r,
                                     int64_t num_samples, uint64_t seed) {
  if (algorithm == "random" || algorithm == "basic" || algorithm == "grid") {
    BasicVariantOptions o;
    o.num_samples = num_samples;
    o.seed = seed;
    r.read("seed", o.seed);
    r.read_points(o.points_to_evaluate);
    return std::make_unique<BasicVariantGenerator>(std::move(o));
  }
  if (algorithm == "tpe" || algorithm == "motpe") {
    TpeOptions o = algorithm == "motpe" ? motpe_defaults() : TpeOptions();
    o.base = model_based_options(r, num_samples, seed);
    r.read("n_ei_candidates", o.n_ei_candidates);
    r.read("gamma", o.gamma);
    r.read("gamma_cap", o.gamma_cap);
    r.read("prior_weight", o.prior_weight);
    r.read("multivariate", o.multivariate);
    r.read("constant_liar", o.constant_liar);
    r.read_choice("bandwidth", {"neighbour", "scott", "auto"}, o.bandwidth);
    r.read_choice("weighting", {"improvement", "optuna"}, o.weighting);
    if (algorithm == "motpe") {
      r.read("feasibility", o.feasibility);
      r.read("redraw_share", o.redraw_share);
      r.read("redraw_ramp", o.redraw_ramp);
      r.read("univariate_share", o.univariate_share);
      return std::make_unique<MotpeSearcher>(std::move(o));
    }
    return std::make_unique<TpeSearcher>(std::move(o));
  }
  if (algorithm == "nsga2") {
    Nsga2Options o;
    o.base = model_based_options(r, num_samples, seed, false);
    r.read("population_size", o.population_size);
    r.read("crossover_prob", o.crossover_prob);
    r.read("mutation_prob", o.mutation_prob);
    r.read("swapping_prob", o.swapping_prob);
    r.read_choice("crossover", {"sbx", "uniform"}, o.crossover);
    r.read("eta_crossover", o.eta_crossover);
    r.read("eta_mutation", o.eta_mutation);
    return std::make_unique<Nsga2Searcher>(std::move(o));
  }
  if (algorithm == "gp" || algorithm == "bayesopt") {
    GpOptions o;
    o.base = model_based_options(r, num_samples, seed);
    r.read("n_candidates", o.n_candidates);
    r.read("fit_restarts", o.fit_restarts);
    r.read_choice("output_transform", {"standardise", "power", "rank"}, o.output_transform);
    r.read("trust_region_dims", o.trust_region_dims);
    r.read_choice("incumbent", {"best", "mean"}, o.incumbent);
    r.read("tpe_trials", o.tpe_trials);
    r.read("feasibility", o.feasibility);
    return std::make_unique<GpSearcher>(std::move(o));
  }
  if (algorithm == "bohb") {
    BohbOptions o;
    o.base = model_based_options(r, num_samples, seed, false);
    if (const Json* v = r.find("time_attr")) {
      if (!v->is_string())
        throw ConfigError::at_key("time_attr", "expected a string, got " + v->dump());
      o.time_attr = v->get<std::string>();
    }
    r.read("min_points_in_model", o.min_points_in_model);
    r.read("top_fraction", o.top_fraction);
    r.read("random_fraction", o.random_fraction);
    r.read("n_candidates", o.n_candidates);
    return std::make_unique<BohbSearcher>(std::move(o));
  }
  throw ConfigError::at_key("algorithm", fmt::format("unknown search algorithm '{}'; known: {}",
                                                     algorithm, kKnownAlgorithms));
}

}  // namespace

std::unique_ptr<Searcher> make_searcher(const std::string& algorithm, const Json& options,
                                        const SearcherContext& context) {
  if (!options.is_null() && !options.is_object()) {
    throw ConfigError::at_key(
        "search", fmt::format("options for searcher '{}' must be a table, got {}", algorithm,
                              options.dump()));
  }
  OptionReader r(algorithm, options);
  int64_t repeat = 1;
  int64_t max_concurrent = 0;
  r.read("repeat", repeat);
  r.read("max_concurrent", max_concurrent);
  if (repeat < 1)
    throw ConfigError::at_key("repeat", fmt::format("must be at least 1, got {}", repeat));
  int64_t num_samples = context.num_samples;
  if (repeat > 1 && num_samples != -1) {
    if (num_samples % repeat != 0) {
      throw ConfigError::at_key(
          "repeat",
          fmt::format("num_samples ({}) must be a multiple of repeat ({})", num_samples, repeat));
    }
    num_samples /= repeat;
  }
  if (options.is_object() && options.contains("max_concurrent") && max_concurrent < 1) {
    throw ConfigError::at_key("max_concurrent",
                              fmt::format("must be at least 1, got {}", max_concurrent));
  }
  std::unique_ptr<Searcher> searcher = make_inner(algorithm, r, num_samples, context.seed);
  r.finish();
  if (repeat > 1) searcher = std::make_unique<Repeater>(std::move(searcher), repeat);
  if (max_concurrent > 0) {
    searcher = std::make_unique<ConcurrencyLimiter>(std::move(searcher), max_concurrent);
  }
  return searcher;
}

namespace {

// A model-based searcher with an unlimited budget: TuneConfig::num_samples limits.
template <class S, class Options>
std::shared_ptr<Searcher> unlimited(Options options) {
  options.base.num_samples = -1;
  return std::make_shared<S>(std::move(options));
}

}  // namespace

std::shared_ptr<Searcher> tpe(TpeOptions options) {
  return unlimited<TpeSearcher>(std::move(options));
}
std::shared_ptr<Searcher> gp(GpOptions options) {
  return unlimited<GpSearcher>(std::move(options));
}
std::shared_ptr<Searcher> bohb(BohbOptions options) {
  return unlimited<BohbSearcher>(std::move(options));
}
std::shared_ptr<Searcher> motpe(TpeOptions options) {
  return unlimited<MotpeSearcher>(std::move(options));
}
std::shared_ptr<Searcher> nsga2(Nsga2Options options) {
  return unlimited<Nsga2Searcher>(std::move(options));
}

}  // namespace tune::search
