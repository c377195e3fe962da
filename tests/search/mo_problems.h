// Multi-objective test problems, shared by the search tests and
// benchmarks/multi_objective (header-only, no test framework). Every
// objective is minimised. benchmarks/anchors/optuna_multi_objective.py
// defines the same problems for Optuna: change both together.
//
//   zdt1, zdt2, zdt3  Zitzler, Deb and Thiele (2000), 10 parameters in [0, 1]:
//                     convex, concave and disconnected fronts at g = 1
//   dtlz2             Deb et al. (2002), 3 objectives, 8 parameters: the
//                     front is the unit sphere's positive octant
//   mlp_latency       a hyperparameter-like mixed space (log rate, choices,
//                     integers): error against a latency that grows with
//                     layers x width, which the error wants large
//   cnn_latency       another: channels (log integer), kernel size, batch
//                     size, rates, quantisation bits; error against latency
// Each has a fixed reference point for the hypervolume, a little beyond
// what random search's worse trials reach.
//
// mo_hard_problems(), a second family that no searcher's defaults were
// chosen on before it existed: multimodal, disconnected and constrained
// fronts, optima on the box's faces and inside it:
//   zdt4        10 parameters, x1..x9 in [-5, 5]: 21^9 local fronts (a
//               Rastrigin g), the optimum at the box's centre
//   zdt6        10 parameters: a non-uniform, biased front; the optimum at
//               x1..x9 = 0, a face of the box
//   zdt6_in     zdt6 with x1..x9 read as |x - 0.35| / 0.65: the optimum
//               inside the box, at 0.35
//   dtlz1       3 objectives, 7 parameters: a linear front behind 11^5
//               local fronts (g of Rastrigin type), the optimum at 0.5
//   dtlz7       3 objectives, 8 parameters: four disconnected regions; the
//               optimum at x2..x7 = 0, a face
//   dtlz7_in    dtlz7 with x2..x7 read as |x - 0.35| / 0.65
//   tnk         Tanaka (1995), 2 parameters in [0, pi], two constraints:
//               the front is the wavy edge of the feasible region
//   srn         Srinivas and Deb (1994), 2 parameters in [-20, 20], two
//               constraints: the front inside the box, at x0 = -2.5
#pragma once

#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include "search/param_space.h"

namespace tune::search::testing {

struct MoProblem {
  std::string name;
  ParamSpace space;
  size_t num_objectives = 2;
  std::function<std::vector<double>(const Json&)> evaluate;  // the losses
  std::vector<double> reference;
  // The problem's own constraints (<= 0: feasible), from the config; empty
  // when it has none.
  std::function<std::vector<double>(const Json&)> constraints;
};

inline ParamSpace unit_box(size_t d) {
  ParamSpace space;
  for (size_t i = 0; i < d; ++i) space.set("x" + std::to_string(i), uniform(0, 1));
  return space;
}

inline std::vector<double> unit_point(const Json& c, size_t d) {
  std::vector<double> x(d);
  for (size_t i = 0; i < d; ++i) x[i] = c["x" + std::to_string(i)].get<double>();
  return x;
}

// ZDT `which` (1, 2 or 3) on 10 parameters.
inline std::vector<double> zdt(const Json& c, int which) {
  const std::vector<double> x = unit_point(c, 10);
  double sum = 0;
  for (size_t i = 1; i < x.size(); ++i) sum += x[i];
  const double f1 = x[0];
  const double g = 1 + 9 * sum / static_cast<double>(x.size() - 1);
  const double r = f1 / g;
  const double h = which == 1   ? 1 - std::sqrt(r)
                   : which == 2 ? 1 - r * r
                                : 1 - std::sqrt(r) - r * std::sin(10 * std::numbers::pi * f1);
  return {f1, g * h};
}

inline std::vector<double> dtlz2(const Json& c) {
  const std::vector<double> x = unit_point(c, 8);
  double g = 0;
  for (size_t i = 2; i < x.size(); ++i) g += (x[i] - 0.5) * (x[i] - 0.5);
  const double a = x[0] * std::numbers::pi / 2, b = x[1] * std::numbers::pi / 2;
  return {(1 + g) * std::cos(a) * std::cos(b), (1 + g) * std::cos(a) * std::sin(b),
          (1 + g) * std::sin(a)};
}

inline ParamSpace mlp_space() {
  return ParamSpace{
      {"lr", loguniform(1e-5, 1e-1)}, {"opt", choice({"adam", "sgd", "rmsprop"})},
      {"drop", uniform(0, 0.5)},      {"act", choice({"relu", "gelu", "tanh", "sigmoid"})},
      {"layers", randint(1, 9)},      {"width", qrandint(16, 512, 16)}};
}

// {error, latency}: the error falls with capacity (layers x width), the
// latency grows with it.
inline std::vector<double> mlp_latency(const Json& c) {
  const std::string opt = c["opt"], act = c["act"];
  const double lr = std::log10(c["lr"].get<double>()) + 2.5 + (opt == "sgd" ? 1.0 : 0.0);
  const double drop = c["drop"].get<double>() - 0.2;
  const double capacity =
      static_cast<double>(c["layers"].get<int64_t>()) * c["width"].get<double>() / 256;
  double error = lr * lr + 4 * drop * drop + 1.2 / (1 + capacity);
  error += opt == "adam" ? 0 : opt == "sgd" ? 0.3 : 0.6;
  error += act == "relu" ? 0 : act == "gelu" ? 0.05 : 0.4;
  const double latency = 0.2 + capacity * (act == "gelu" ? 1.3 : act == "sigmoid" ? 1.1 : 1.0);
  return {error, latency};
}

inline ParamSpace cnn_space() {
  return ParamSpace{{"channels", lograndint(8, 257)},      {"kernel", choice({3, 5, 7})},
                    {"batch", choice({32, 64, 128, 256})}, {"lr", loguniform(1e-4, 1)},
                    {"wd", loguniform(1e-6, 1e-2)},        {"bits", choice({8, 16, 32})}};
}

// {error, latency}: wider and larger-kernel networks err less and run
// slower; fewer bits run faster and err a little more; the best rate
// grows with the batch, which shortens the latency per sample.
inline std::vector<double> cnn_latency(const Json& c) {
  const double channels = static_cast<double>(c["channels"].get<int64_t>());
  const int kernel = c["kernel"].get<int>();
  const double batch = c["batch"].get<double>();
  const int bits = c["bits"].get<int>();
  const double lr = std::log10(c["lr"].get<double>()) - (-2 + 0.3 * std::log2(batch / 32));
  const double wd = std::log10(c["wd"].get<double>()) + 4;
  double error = 0.3 * lr * lr + 0.1 * wd * wd + 0.05 * std::log2(batch / 32);
  error += 1.5 / (1 + channels / 16) * (kernel == 3 ? 1.0 : kernel == 5 ? 0.85 : 0.8);
  error += bits == 8 ? 0.1 : bits == 16 ? 0.01 : 0.0;
  const double latency = channels * kernel * kernel / 500.0 * bits / 32 + 8 / std::sqrt(batch);
  return {error, latency};
}

// The constraint of the constrained version of problem `name` (<= 0:
// feasible), from its losses: it cuts off about half of the front. ZDT:
// f1 >= 0.5 (the front's left half goes); DTLZ2: f3 >= 0.5; the latency
// problems: latency <= 3.
inline double mo_constraint(const std::string& name, const std::vector<double>& losses) {
  if (name.starts_with("zdt")) return 0.5 - losses[0];
  if (name == "dtlz2") return 0.5 - losses[2];
  return losses[1] - 3.0;
}

inline std::vector<MoProblem> mo_problems() {
  std::vector<MoProblem> out;
  for (int which : {1, 2, 3}) {
    out.push_back({"zdt" + std::to_string(which),
                   unit_box(10),
                   2,
                   [which](const Json& c) { return zdt(c, which); },
                   {1.1, 7}});
  }
  out.push_back({"dtlz2", unit_box(8), 3, dtlz2, {1.5, 1.5, 1.5}});
  out.push_back({"mlp_latency", mlp_space(), 2, mlp_latency, {3, 22}});
  out.push_back({"cnn_latency", cnn_space(), 2, cnn_latency, {3, 30}});
  return out;
}

// ZDT4: f1 = x0, g = 1 + 90 + sum(xi^2 - 10 cos(4 pi xi)) over x1..x9 in
// [-5, 5].
inline std::vector<double> zdt4(const Json& c) {
  const std::vector<double> x = unit_point(c, 10);
  double g = 1 + 10 * 9;
  for (size_t i = 1; i < x.size(); ++i) {
    g += x[i] * x[i] - 10 * std::cos(4 * std::numbers::pi * x[i]);
  }
  return {x[0], g * (1 - std::sqrt(x[0] / g))};
}

// x read as |x - centre| / (1 - centre): 0 at `centre`, 1 at x = 1.
inline double moved(double x, double centre) { return std::abs(x - centre) / (1 - centre); }

// ZDT6, its optimum at x1..x9 = `centre`.
inline std::vector<double> zdt6(const Json& c, double centre) {
  const std::vector<double> x = unit_point(c, 10);
  double sum = 0;
  for (size_t i = 1; i < x.size(); ++i) sum += moved(x[i], centre);
  const double f1 = 1 - std::exp(-4 * x[0]) * std::pow(std::sin(6 * std::numbers::pi * x[0]), 6);
  const double g = 1 + 9 * std::pow(sum / 9, 0.25);
  return {f1, g * (1 - (f1 / g) * (f1 / g))};
}

inline std::vector<double> dtlz1(const Json& c) {
  const std::vector<double> x = unit_point(c, 7);
  double g = 5;
  for (size_t i = 2; i < x.size(); ++i) {
    const double y = x[i] - 0.5;
    g += y * y - std::cos(20 * std::numbers::pi * y);
  }
  g *= 100;
  return {0.5 * x[0] * x[1] * (1 + g), 0.5 * x[0] * (1 - x[1]) * (1 + g),
          0.5 * (1 - x[0]) * (1 + g)};
}

// DTLZ7, its optimum at x2..x7 = `centre`.
inline std::vector<double> dtlz7(const Json& c, double centre) {
  const std::vector<double> x = unit_point(c, 8);
  double sum = 0;
  for (size_t i = 2; i < x.size(); ++i) sum += moved(x[i], centre);
  const double g = 1 + 9 * sum / 6;
  double h = 3;
  for (size_t i = 0; i < 2; ++i) h -= x[i] / (1 + g) * (1 + std::sin(3 * std::numbers::pi * x[i]));
  return {x[0], x[1], (1 + g) * h};
}

inline ParamSpace box(std::vector<std::pair<double, double>> bounds) {
  ParamSpace space;
  for (size_t i = 0; i < bounds.size(); ++i) {
    space.set("x" + std::to_string(i), uniform(bounds[i].first, bounds[i].second));
  }
  return space;
}

inline std::vector<MoProblem> mo_hard_problems() {
  std::vector<std::pair<double, double>> zdt4_box(10, {-5.0, 5.0});
  zdt4_box[0] = {0, 1};
  std::vector<MoProblem> out;
  out.push_back({"zdt4", box(zdt4_box), 2, zdt4, {1.1, 160}});
  out.push_back({"zdt6", unit_box(10), 2, [](const Json& c) { return zdt6(c, 0); }, {1.1, 9}});
  out.push_back(
      {"zdt6_in", unit_box(10), 2, [](const Json& c) { return zdt6(c, 0.35); }, {1.1, 9}});
  out.push_back({"dtlz1", unit_box(7), 3, dtlz1, {150, 150, 150}});
  out.push_back(
      {"dtlz7", unit_box(8), 3, [](const Json& c) { return dtlz7(c, 0); }, {1.1, 1.1, 16}});
  out.push_back(
      {"dtlz7_in", unit_box(8), 3, [](const Json& c) { return dtlz7(c, 0.35); }, {1.1, 1.1, 16}});
  out.push_back({"tnk",
                 box({{1e-6, std::numbers::pi}, {1e-6, std::numbers::pi}}),
                 2,
                 [](const Json& c) { return unit_point(c, 2); },
                 {1.2, 1.2},
                 [](const Json& c) {
                   const auto x = unit_point(c, 2);
                   return std::vector<double>{
                       1 + 0.1 * std::cos(16 * std::atan(x[0] / x[1])) - x[0] * x[0] - x[1] * x[1],
                       (x[0] - 0.5) * (x[0] - 0.5) + (x[1] - 0.5) * (x[1] - 0.5) - 0.5};
                 }});
  out.push_back(
      {"srn",
       box({{-20, 20}, {-20, 20}}),
       2,
       [](const Json& c) {
         const auto x = unit_point(c, 2);
         return std::vector<double>{2 + (x[0] - 2) * (x[0] - 2) + (x[1] - 1) * (x[1] - 1),
                                    9 * x[0] - (x[1] - 1) * (x[1] - 1)};
       },
       {250, 0},
       [](const Json& c) {
         const auto x = unit_point(c, 2);
         return std::vector<double>{x[0] * x[0] + x[1] * x[1] - 225, x[0] - 3 * x[1] + 10};
       }});
  return out;
}

}  // namespace tune::search::testing
