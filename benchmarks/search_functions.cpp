#include "benchmarks/search_functions.h"

#include <cmath>
#include <numbers>

#include "tests/search/objectives.h"

namespace bench {
namespace {

using tune::Json;
namespace testing = tune::search::testing;

double hartmann6(const Json& c) {
  static constexpr double kA[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
                                      {.05, 10, 17, .1, 8, 14},
                                      {3, 3.5, 1.7, 10, 17, 8},
                                      {17, 8, .05, 10, .1, 14}};
  static constexpr double kP[4][6] = {{1312, 1696, 5569, 124, 8283, 5886},
                                      {2329, 4135, 8307, 3736, 1004, 9991},
                                      {2348, 1451, 3522, 2883, 3047, 6650},
                                      {4047, 8828, 8732, 5743, 1091, 381}};
  static constexpr double kAlpha[4] = {1.0, 1.2, 3.0, 3.2};
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    double inner = 0;
    for (int j = 0; j < 6; ++j) {
      const double d = c["x" + std::to_string(j)].get<double>() - 1e-4 * kP[i][j];
      inner += kA[i][j] * d * d;
    }
    sum += kAlpha[i] * std::exp(-inner);
  }
  return -sum;
}

// x0..x{d-1}, each uniform on [low, high], and back.
tune::ParamSpace box(int d, double low, double high) {
  tune::ParamSpace space;
  for (int j = 0; j < d; ++j) space.set("x" + std::to_string(j), tune::uniform(low, high));
  return space;
}

std::vector<double> coordinates(const Json& c, int d) {
  std::vector<double> x(d);
  for (int j = 0; j < d; ++j) x[j] = c["x" + std::to_string(j)].get<double>();
  return x;
}

double hartmann3(const Json& c) {
  static constexpr double kA[4][3] = {{3, 10, 30}, {.1, 10, 35}, {3, 10, 30}, {.1, 10, 35}};
  static constexpr double kP[4][3] = {
      {3689, 1170, 2673}, {4699, 4387, 7470}, {1091, 8732, 5547}, {381, 5743, 8828}};
  static constexpr double kAlpha[4] = {1.0, 1.2, 3.0, 3.2};
  const auto x = coordinates(c, 3);
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    double inner = 0;
    for (int j = 0; j < 3; ++j) inner += kA[i][j] * std::pow(x[j] - 1e-4 * kP[i][j], 2);
    sum += kAlpha[i] * std::exp(-inner);
  }
  return -sum;
}

double six_hump_camel(const Json& c) {
  const auto x = coordinates(c, 2);
  const double a = x[0] * x[0], b = x[1] * x[1];
  return (4 - 2.1 * a + a * a / 3) * a + x[0] * x[1] + (-4 + 4 * b) * b;
}

double log_rosenbrock4(const Json& c) {  // log(1 + f): the raw values span 1e-3..1e6
  const auto x = coordinates(c, 4);
  double sum = 0;
  for (int i = 0; i < 3; ++i) {
    sum += 100 * std::pow(x[i + 1] - x[i] * x[i], 2) + std::pow(1 - x[i], 2);
  }
  return std::log1p(sum);
}

double rosenbrock4(const Json& c) {  // raw: a curved valley, values over 1e-3..1e6
  const auto x = coordinates(c, 4);
  double sum = 0;
  for (int i = 0; i < 3; ++i) {
    sum += 100 * std::pow(x[i + 1] - x[i] * x[i], 2) + std::pow(1 - x[i], 2);
  }
  return sum;
}

double styblinski_tang4(const Json& c) {
  double sum = 0;
  for (double x : coordinates(c, 4)) sum += x * x * x * x - 16 * x * x + 5 * x;
  return sum / 2;
}

double ackley(const Json& c, int d) {
  const auto x = coordinates(c, d);
  double squares = 0, cosines = 0;
  for (double v : x) {
    squares += v * v;
    cosines += std::cos(2 * std::numbers::pi * v);
  }
  return -20 * std::exp(-0.2 * std::sqrt(squares / d)) - std::exp(cosines / d) + 20 +
         std::numbers::e;
}

double log_rosenbrock10(const Json& c) {
  const auto x = coordinates(c, 10);
  double sum = 0;
  for (int i = 0; i < 9; ++i) {
    sum += 100 * std::pow(x[i + 1] - x[i] * x[i], 2) + std::pow(1 - x[i], 2);
  }
  return std::log1p(sum);
}

// Rugged: many regular local minima over a global trend. Rastrigin's
// bowl moved off the centre by `shift` in every coordinate.
double rastrigin(const Json& c, int d, double shift) {
  double sum = 10.0 * d;
  for (double v : coordinates(c, d)) {
    v -= shift;
    sum += v * v - 10 * std::cos(2 * std::numbers::pi * v);
  }
  return sum;
}

// Griewank: a shallow bowl whose ripples (period 2 pi sqrt(i) in coordinate
// i) are as deep as the bowl near the optimum.
double griewank(const Json& c, int d) {
  double squares = 0, product = 1;
  const auto x = coordinates(c, d);
  for (int i = 0; i < d; ++i) {
    squares += x[i] * x[i];
    product *= std::cos(x[i] / std::sqrt(i + 1.0));
  }
  return 1 + squares / 4000 - product;
}

// Schwefel: deceptive; the best basin lies near a corner (420.97 in each
// coordinate), far from the second best.
double schwefel(const Json& c, int d) {
  double sum = 418.9828872724339 * d;
  for (double v : coordinates(c, d)) sum -= v * std::sin(std::sqrt(std::abs(v)));
  return sum;
}

// Levy: ripples of period 1 over a wide bowl, its optimum at 1 in every
// coordinate.
double levy(const Json& c, int d) {
  const auto x = coordinates(c, d);
  const auto w = [&](int i) { return 1 + (x[i] - 1) / 4; };
  const double pi = std::numbers::pi;
  double sum = std::pow(std::sin(pi * w(0)), 2);
  for (int i = 0; i + 1 < d; ++i) {
    sum += std::pow(w(i) - 1, 2) * (1 + 10 * std::pow(std::sin(pi * w(i) + 1), 2));
  }
  const double last = w(d - 1);
  return sum + std::pow(last - 1, 2) * (1 + std::pow(std::sin(2 * pi * last), 2));
}

}  // namespace

std::vector<Function> functions(bool more, bool shapes, bool high_dims, bool rugged) {
  std::vector<Function> list = {{"branin", testing::branin_space(), testing::branin, 0.397887},
                                {"hartmann6", box(6, 0, 1), hartmann6, -3.32237}};
  if (more) {
    tune::ParamSpace camel{{"x0", tune::uniform(-3, 3)}, {"x1", tune::uniform(-2, 2)}};
    list.push_back({"hartmann3", box(3, 0, 1), hartmann3, -3.86278});
    list.push_back({"camel", camel, six_hump_camel, -1.0316285});
    list.push_back({"rosen4_log", box(4, -5, 10), log_rosenbrock4, 0});
    list.push_back({"styb_tang4", box(4, -5, 5), styblinski_tang4, -39.16617 * 4});
    list.push_back(
        {"ackley5", box(5, -32.768, 32.768), [](const Json& c) { return ackley(c, 5); }, 0});
    list.push_back({"hpo_choice", testing::hpo_space(false), testing::hpo_loss, 0});
    list.push_back({"hpo_mixed", testing::hpo_space(true), testing::hpo_loss, 0});
  }
  if (shapes) {
    list.push_back({"rosen4", box(4, -5, 10), rosenbrock4, 0});
    list.push_back(
        {"rastrigin4", box(4, -5.12, 5.12), [](const Json& c) { return rastrigin(c, 4, 0); }, 0});
  }
  if (rugged) {  // where GP-BO's acquisition meets many local minima
    list.push_back(
        {"rastr2", box(2, -5.12, 5.12), [](const Json& c) { return rastrigin(c, 2, 0); }, 0});
    list.push_back(
        {"rastr3_off", box(3, -5.12, 5.12), [](const Json& c) { return rastrigin(c, 3, 1.7); }, 0});
    if (!shapes) {  // the shape functions' Rastrigin-4
      list.push_back(
          {"rastrigin4", box(4, -5.12, 5.12), [](const Json& c) { return rastrigin(c, 4, 0); }, 0});
    }
    list.push_back(
        {"rastr6", box(6, -5.12, 5.12), [](const Json& c) { return rastrigin(c, 6, 0); }, 0});
    list.push_back({"griewank4", box(4, -50, 50), [](const Json& c) { return griewank(c, 4); }, 0});
    list.push_back({"griewank6", box(6, -50, 50), [](const Json& c) { return griewank(c, 6); }, 0});
    list.push_back(
        {"schwefel2", box(2, -500, 500), [](const Json& c) { return schwefel(c, 2); }, 0});
    list.push_back(
        {"schwefel4", box(4, -500, 500), [](const Json& c) { return schwefel(c, 4); }, 0});
    list.push_back({"levy4", box(4, -10, 10), [](const Json& c) { return levy(c, 4); }, 0});
    list.push_back(
        {"griewank4_600", box(4, -600, 600), [](const Json& c) { return griewank(c, 4); }, 0});
    list.push_back(
        {"ackley4", box(4, -32.768, 32.768), [](const Json& c) { return ackley(c, 4); }, 0});
  }
  if (high_dims) {  // where GP-BO's trust region joins (search/internal/gp.h: trust_region_dims)
    list.push_back(
        {"ackley10", box(10, -32.768, 32.768), [](const Json& c) { return ackley(c, 10); }, 0});
    list.push_back({"rosen10_log", box(10, -5, 10), log_rosenbrock10, 0});
  }
  return list;
}

}  // namespace bench
