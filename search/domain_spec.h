// Domains written as data: a one-key object {"KIND": [ARGS...]}, as sweep
// files (`x = { uniform = [0, 1] }`) and plug-in options tables (PBT's
// hyperparam_mutations) spell them.
#pragma once

#include <string>
#include <vector>

#include "search/domain.h"

namespace tune {

// The kinds domain_from_spec understands, for error messages.
const std::vector<std::string>& domain_spec_kinds();

// {"uniform": [lo, hi]}, {"loguniform": [lo, hi]}, {"randint": [lo, hi]},
// {"choice": [values...]}, {"grid_search": [values...]}. Throws ConfigError
// saying what is wrong (unknown kind, wrong arity, bad bounds).
Domain domain_from_spec(const Json& spec);

}  // namespace tune
