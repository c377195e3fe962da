#include "dashboard/importance.h"

#include <doctest/doctest.h>

#include <random>

#include "dashboard/internal/fanova.h"
#include "fixture.h"

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

TEST_CASE("fANOVA beside it ranks the same way, its shares summing to 1") {
  const Json result = importance(points(120, 1), kParams, "loss");
  REQUIRE(result["fanova"].size() == 4);
  CHECK(result["fanova"][0]["name"] == "x");
  CHECK(result["fanova"][0]["importance"].get<double>() > 0.8);
  CHECK(result["fanova"][1]["name"] == "lr");
  double sum = 0;
  for (const Json& p : result["fanova"]) sum += p["importance"].get<double>();
  CHECK(sum == doctest::Approx(1.0));
}

TEST_CASE("fANOVA of one tree: main effects apart, an interaction explained by neither") {
  using internal::TreeNode;
  const Eigen::VectorXd lo = Eigen::VectorXd::Zero(2), hi = Eigen::VectorXd::Ones(2);
  // f = [x0 >= 0.5]: x0 explains it all.
  const std::vector<TreeNode> step = {
      {.feature = 0, .threshold = 0.5, .left = 1, .right = 2}, {.value = 0}, {.value = 1}};
  auto shares = internal::main_effect_shares(step, lo, hi);
  CHECK(shares[0] == doctest::Approx(1.0));
  CHECK(shares[1] == doctest::Approx(0.0));
  // f = 2 [x0 >= 0.5] + [x1 >= 0.25]: variances 4/4 and 3/16, shares 16/19 and 3/19.
  const std::vector<TreeNode> additive = {{.feature = 0, .threshold = 0.5, .left = 1, .right = 4},
                                          {.feature = 1, .threshold = 0.25, .left = 2, .right = 3},
                                          {.value = 0},
                                          {.value = 1},
                                          {.feature = 1, .threshold = 0.25, .left = 5, .right = 6},
                                          {.value = 2},
                                          {.value = 3}};
  shares = internal::main_effect_shares(additive, lo, hi);
  CHECK(shares[0] == doctest::Approx(16.0 / 19));
  CHECK(shares[1] == doctest::Approx(3.0 / 19));
  // f = [x0 >= 0.5] xor [x1 >= 0.5]: no main effect at all.
  const std::vector<TreeNode> xor_tree = {{.feature = 0, .threshold = 0.5, .left = 1, .right = 4},
                                          {.feature = 1, .threshold = 0.5, .left = 2, .right = 3},
                                          {.value = 0},
                                          {.value = 1},
                                          {.feature = 1, .threshold = 0.5, .left = 5, .right = 6},
                                          {.value = 1},
                                          {.value = 0}};
  shares = internal::main_effect_shares(xor_tree, lo, hi);
  CHECK(shares[0] == doctest::Approx(0.0));
  CHECK(shares[1] == doctest::Approx(0.0));
  // A constant tree explains nothing.
  CHECK(internal::main_effect_shares({{.value = 3}}, lo, hi).isZero());
}

TEST_CASE("importance waits for enough trials with a finite value") {
  auto few = points(20, 2);
  for (size_t i = 0; i < few.size(); ++i) {
    if (i % 4 != 0) few[i].last_metrics = nullptr;  // no result yet
  }
  few[0].last_metrics["loss"] = nullptr;  // a NaN is stored as null
  const Json result = importance(few, kParams, "loss");
  CHECK(result["params"].empty());
  CHECK(result["num_trials"] == 4);
  CHECK(result["reason"].get<std::string>().find("at least 8") != std::string::npos);
}

TEST_CASE("importance compares the trials at one budget, the highest that enough trials reached") {
  test::ScratchDir runs;
  // 12 trials: 8 report 9 iterations, 4 were stopped at iteration 3.
  const auto db = ExperimentDb::open(test::write_experiment(runs.path(), "asha"));
  const Json params = db.summary()["params"];
  CHECK(db.params() == params);  // what the page reads
  const Json at_9 = importance_at_one_budget(db, params, "accuracy");
  CHECK(at_9["budget"] == 9);
  CHECK(at_9["num_trials"] == 8);
  CHECK(at_9["params"].size() == 2);
  const Json at_3 = importance_at_one_budget(db, params, "accuracy", {.min_trials = 10});
  CHECK(at_3["budget"] == 3);
  CHECK(at_3["num_trials"] == 12);
  const Json none = importance_at_one_budget(db, params, "accuracy", {.min_trials = 13});
  CHECK(none["budget"].is_null());
  CHECK(none["params"].empty());
  CHECK(at_9["method"].get<std::string>().find("fANOVA over the same forest") != std::string::npos);
}

TEST_CASE("a subsample of the trials at the budget is the same on every load") {
  test::ScratchDir runs;
  const auto db = ExperimentDb::open(test::write_experiment(runs.path(), "asha", 40));
  const Json params = db.summary()["params"];
  // 27 trials reached iteration 9; 12 of them are drawn.
  const ImportanceOptions drawn{.min_trials = 5, .max_trials = 12, .seed = 3};
  const Json page = importance_at_one_budget(db, params, "accuracy", drawn);
  CHECK(page["budget"] == 9);
  CHECK(page["num_trials"] == 12);
  CHECK(page["params"].size() == 2);
  CHECK(importance_at_one_budget(ExperimentDb::open(runs.path() / "asha"), params, "accuracy",
                                 drawn) == page);
  // The trials drawn are those importance() draws from every trial's point there.
  auto [budget, points] = db.points_at_one_budget("accuracy", drawn.min_trials);
  CHECK(points.size() == 27);
  Json expected = importance(points, params, "accuracy", drawn);
  expected["budget"] = budget;
  CHECK(page == expected);
  // Another seed draws others.
  CHECK(importance_at_one_budget(db, params, "accuracy", {.min_trials = 5, .max_trials = 12}) !=
        page);
}

TEST_CASE("importance's budget skips an iteration where the metric is missing or not finite") {
  test::ScratchDir runs;
  const auto dir = test::write_experiment(runs.path(), "asha");
  {
    // The 8 trials that reached iteration 9 report a 10th without accuracy.
    auto store = storage::ExperimentStore::open(dir);
    for (const storage::TrialRecord& t : store.trials()) {
      if (store.results(t.trial_id).size() != 9) continue;
      // Null (a NaN, as stored) for one, a string for the others.
      const Json accuracy = t.trial_index == 0 ? Json() : Json("n/a");
      store.append_result({.trial_id = t.trial_id,
                           .training_iteration = 10,
                           .metrics = {{"loss", 0.5}, {"accuracy", accuracy}}});
    }
    store.flush();
  }
  const auto db = ExperimentDb::open(dir);
  const Json at_9 = importance_at_one_budget(db, db.summary()["params"], "accuracy");
  CHECK(at_9["budget"] == 9);
  CHECK(at_9["num_trials"] == 8);
}

}  // namespace
}  // namespace tune::dashboard
