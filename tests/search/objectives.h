// Synthetic objectives with known minima, shared by the search tests and
// benchmarks/search_quality (header-only, no test framework).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>

#include "search/param_space.h"

namespace tune::search::testing {

// Branin on [-5, 10] x [0, 15]: three global minima of 0.397887.
inline double branin(const Json& c) {
  const double x1 = c["x1"].get<double>(), x2 = c["x2"].get<double>();
  const double pi = std::numbers::pi;
  const double t = x2 - 5.1 / (4 * pi * pi) * x1 * x1 + 5 / pi * x1 - 6;
  return t * t + 10 * (1 - 1 / (8 * pi)) * std::cos(x1) + 10;
}

inline const ParamSpace& branin_space() {
  static const ParamSpace space{{"x1", uniform(-5, 10)}, {"x2", uniform(0, 15)}};
  return space;
}

// A hyperparameter-like space: a log-scaled rate whose best value depends
// on the optimiser chosen, a float, two choices and, with `integers`, a
// layer count and a width. 0 at adam, relu, lr 10^-2.5, dropout 0.2 (and 4
// layers, width 128); sgd wants a ten times larger rate.
inline ParamSpace hpo_space(bool integers) {
  ParamSpace space{{"lr", loguniform(1e-5, 1e-1)},
                   {"opt", choice({"adam", "sgd", "rmsprop"})},
                   {"drop", uniform(0, 0.5)},
                   {"act", choice({"relu", "gelu", "tanh", "sigmoid"})}};
  if (integers) {
    space.set("layers", randint(1, 9));
    space.set("width", qrandint(16, 512, 16));
  }
  return space;
}

inline double hpo_loss(const Json& c) {
  const std::string opt = c["opt"], act = c["act"];
  const double lr = std::log10(c["lr"].get<double>()) + 2.5 + (opt == "sgd" ? 1.0 : 0.0);
  const double drop = c["drop"].get<double>() - 0.2;
  double v = lr * lr + 4 * drop * drop;
  v += opt == "adam" ? 0 : opt == "sgd" ? 0.3 : 0.6;
  v += act == "relu" ? 0 : act == "gelu" ? 0.05 : 0.4;
  if (c.contains("layers")) {
    v += 0.3 * std::abs(static_cast<double>(c["layers"].get<int64_t>() - 4)) +
         0.2 * std::pow(std::log2(c["width"].get<double>()) - 7, 2);
  }
  return v;
}

}  // namespace tune::search::testing
