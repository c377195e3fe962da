// Domains written as data: a one-key object {"KIND": [ARGS...]}, as sweep
// files (`x = { uniform = [0, 1] }`) and plug-in options tables (PBT's
// hyperparam_mutations) spell them.
//
//   {"uniform": [lo, hi]}        {"quniform": [lo, hi, q]}
//   {"loguniform": [lo, hi]}     {"qloguniform": [lo, hi, q]}
//   {"randn": [mean, sd]}        {"qrandn": [mean, sd, q]}      ({"randn": []} is N(0, 1))
//   {"randint": [lo, hi]}        {"qrandint": [lo, hi, q]}      (integers)
//   {"lograndint": [lo, hi]}     {"qlograndint": [lo, hi, q]}   (integers)
//   {"choice": [values...]}      {"grid_search": [values...]}
//
// Conditional values (sample_from) are functions and exist in C++ only.
#pragma once

#include <string>
#include <vector>

#include "search/domain.h"

namespace tune {

// The kinds domain_from_spec understands, for error messages.
const std::vector<std::string>& domain_spec_kinds();

// Throws ConfigError saying what is wrong (unknown kind, wrong arity, a
// non-number or non-integer argument, bad bounds, q not dividing the bounds).
Domain domain_from_spec(const Json& spec);

}  // namespace tune
