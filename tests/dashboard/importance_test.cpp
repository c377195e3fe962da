#include "dashboard/importance.h"

#include <doctest/doctest.h>

#include <random>

namespace tune::dashboard {
namespace {

std::vector<TrialPoint> points(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<TrialPoint> out;
  for (int i = 0; i < n; ++i) {
    const double x = u(rng), noise = u(rng), lr = std::pow(10.0, -4 + 3 * u(rng));
    const std::string opt = i % 2 ? "adam" : "sgd";
    // The metric follows x strongly, lr a little, and ignores opt and noise.
    const double y = 10 * x * x + 0.5 * std::log10(lr);
    out.push_back({.trial_id = std::to_string(i),
                   .status = "TERMINATED",
                   .config = {{"x", x}, {"noise", noise}, {"lr", lr}, {"opt", opt}},
                   .last_metrics = {{"loss", y}}});
  }
  return out;
}

const Json kParams = Json::array({{{"name", "x"}, {"log", false}},
                                  {{"name", "noise"}, {"log", false}},
                                  {{"name", "lr"}, {"log", true}},
                                  {{"name", "opt"}, {"log", false}}});

TEST_CASE("importance ranks the parameter the metric depends on first, the ignored ones last") {
  const Json result = importance(points(120, 1), kParams, "loss");
  REQUIRE(result["params"].size() == 4);
  CHECK(result["num_trials"] == 120);
  CHECK(result["params"][0]["name"] == "x");
  CHECK(result["params"][0]["importance"].get<double>() > 0.8);
  CHECK(result["params"][1]["name"] == "lr");
  double sum = 0;
  for (const Json& p : result["params"]) sum += p["importance"].get<double>();
  CHECK(sum == doctest::Approx(1.0));
  // Same seed, same answer.
  CHECK(importance(points(120, 1), kParams, "loss") == result);
}

TEST_CASE("importance waits for enough finished trials with a finite value") {
  auto few = points(20, 2);
  for (size_t i = 0; i < few.size(); ++i) {
    if (i % 4 != 0) few[i].status = "RUNNING";
  }
  few[0].last_metrics["loss"] = nullptr;  // a NaN is stored as null
  const Json result = importance(few, kParams, "loss");
  CHECK(result["params"].empty());
  CHECK(result["num_trials"] == 4);
  CHECK(result["reason"].get<std::string>().find("at least 8") != std::string::npos);
}

}  // namespace
}  // namespace tune::dashboard
