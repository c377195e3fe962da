// PBT's hyperparam_mutations, parsed once from their JSON form, and Ray's
// _explore step over them.
//
// JSON form (TOML [scheduler.hyperparam_mutations]): per key, an array (a
// list of allowed values), a one-key domain table ({loguniform = [lo, hi]},
// see search/domain_spec.h) or any other table (nested keys).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "search/domain.h"

namespace tune::schedulers::detail {

struct Mutation {
  std::optional<std::vector<Json>> list;
  std::optional<Domain> domain;
  std::map<std::string, Mutation> nested;  // when neither of the above
};

// Throws ConfigError naming "hyperparam_mutations.KEY" on a bad entry.
std::map<std::string, Mutation> parse_mutations(const Json& spec, const std::string& prefix);

struct ExploreParams {
  double resample_probability;
  std::vector<double> perturbation_factors;
};

// Ray's _explore (without the custom function): for each mutated key of
// `config`, with probability resample_probability (or when the current value
// is not usable) a fresh draw; otherwise a list value moves to a neighbour
// (clamped at the ends) and a numeric value is multiplied by one of the
// perturbation factors, converted back to an integer when it was one.
Json explore(const Json& config, const std::map<std::string, Mutation>& mutations,
             const ExploreParams& params, Rng& rng);

// A uniform double in [0, 1) from one draw (the same as search/domain.cpp).
double unit(Rng& rng);

}  // namespace tune::schedulers::detail
