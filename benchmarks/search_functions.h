// search_quality's test functions: each with its space and optimum.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "search/param_space.h"

namespace bench {

struct Function {
  std::string name;
  tune::ParamSpace space;
  std::function<double(const tune::Json&)> f;
  double optimum;
};

// Branin and Hartmann6 (Optuna's baseline runs the same two); with `more`,
// seven others for a wider view (ours only); with `shapes`, Rosenbrock-4 raw
// and Rastrigin-4; with `high_dims`, Ackley-10 and log Rosenbrock-10; with
// `rugged`, Rastrigin (2, 3 off centre, 4, 6 dims), Griewank (4, 6) and
// Schwefel (2, 4): many regular local minima over a global trend.
std::vector<Function> functions(bool more, bool shapes, bool high_dims, bool rugged);

}  // namespace bench
