#include "search/internal/gp.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/errors.h"
#include "search/internal/basic_variant.h"
#include "search/internal/gaussian_process.h"
#include "search/internal/gp_fit.h"
#include "search/internal/tpe.h"
#include "tests/search/objectives.h"
#include "tests/search/searcher_test_util.h"

namespace tune::search {
namespace {

using testing::branin;
using testing::branin_space;
using testing::run_sequential;

GpOptions gp_options(int64_t num_samples, uint64_t seed) {
  GpOptions o;
  o.base.num_samples = num_samples;
  o.base.seed = seed;
  o.n_candidates = 300;
  return o;
}

TEST_CASE("gp: the same seed gives the same configs") {
  GpSearcher a(gp_options(20, 1)), b(gp_options(20, 1));
  for (auto* s : {&a, &b}) s->set_search_properties("loss", Mode::kMin, branin_space());
  CHECK(run_sequential(a, 20, branin) == run_sequential(b, 20, branin));
}

TEST_CASE("gp: a suggestion from the model reports its model fit, a random one none") {
  GpOptions o = gp_options(14, 3);
  o.tpe_trials = 0;
  GpSearcher gp(o);
  gp.set_search_properties("loss", Mode::kMin, branin_space());
  run_sequential(gp, 10, branin);  // n_startup_trials: random configs
  Suggestion from_model = gp.suggest("t10");
  REQUIRE(from_model.model_fit_s);
  CHECK(*from_model.model_fit_s >= 0);
  GpSearcher fresh(o);
  fresh.set_search_properties("loss", Mode::kMin, branin_space());
  CHECK_FALSE(fresh.suggest("t0").model_fit_s);
}

TEST_CASE("gp: restore on a fresh searcher gives the same next suggestions") {
  GpSearcher a(gp_options(30, 2));
  a.set_search_properties("loss", Mode::kMin, branin_space());
  run_sequential(a, 15, branin);
  REQUIRE(a.suggest("running").status == Suggestion::Status::kConfig);
  const Json state = Json::parse(a.save().dump());
  GpSearcher b(gp_options(30, 2));
  b.set_search_properties("loss", Mode::kMin, branin_space());
  b.restore(state);
  CHECK(run_sequential(a, 5, branin, 100) == run_sequential(b, 5, branin, 100));
}

TEST_CASE("gp: TPE's model suggests until tpe_trials trials have completed, GP-BO's after") {
  GpOptions o = gp_options(30, 3);
  o.tpe_trials = 15;
  GpSearcher gp(o);
  TpeOptions t;
  t.base = o.base;
  TpeSearcher tpe(t);
  for (Searcher* s : std::initializer_list<Searcher*>{&gp, &tpe}) {
    s->set_search_properties("loss", Mode::kMin, branin_space());
  }
  const auto ours = run_sequential(gp, 15, branin);
  CHECK(ours == run_sequential(tpe, 15, branin));
  CHECK(gp.save()["model"].is_null());  // no GP fitted yet
  const Json next = gp.suggest("t15").config;
  CHECK(next != tpe.suggest("t15").config);
  CHECK(gp.save()["model"].is_array());
}

TEST_CASE("gp finds Branin's optimum region in 30 trials") {
  // The median over seeds: one or two seeds in thirty are still short of the
  // region at 30 trials (the optimum is 0.398).
  std::vector<double> best;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    GpSearcher gp(gp_options(30, seed));
    gp.set_search_properties("loss", Mode::kMin, branin_space());
    best.push_back(testing::best_of(run_sequential(gp, 30, branin), branin));
  }
  std::sort(best.begin(), best.end());
  CHECK(best[2] < 0.6);
}

TEST_CASE(
    "gp with incumbent = mean finds Branin's optimum region in 30 trials, deterministically") {
  std::vector<double> best;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    GpOptions o = gp_options(30, seed);
    o.incumbent = GpIncumbent::kMean;
    GpSearcher gp(o), again(o);
    for (auto* s : {&gp, &again}) s->set_search_properties("loss", Mode::kMin, branin_space());
    const auto values = run_sequential(gp, 30, branin);
    if (seed == 0) CHECK(values == run_sequential(again, 30, branin));
    best.push_back(testing::best_of(values, branin));
  }
  std::sort(best.begin(), best.end());
  CHECK(best[2] < 0.6);
}

TEST_CASE("gp with a constraint: the best feasible config near the constraint's edge") {
  // Minimise the distance to (0.8, 0.8) subject to x + y <= 1: the feasible
  // optimum is (0.5, 0.5), on the edge, at squared distance 0.18.
  const ParamSpace space{{"x", uniform(0, 1)}, {"y", uniform(0, 1)}};
  auto trial = [](const Json& c) {
    const double x = c["x"].get<double>(), y = c["y"].get<double>();
    return Json{{"loss", (x - 0.8) * (x - 0.8) + (y - 0.8) * (y - 0.8)},
                {"constraints", x + y - 1}};
  };
  std::vector<double> best;
  int feasible_late = 0;
  for (uint64_t seed = 0; seed < 3; ++seed) {
    GpSearcher gp(gp_options(40, seed));
    gp.set_search_properties("loss", Mode::kMin, space);
    double seed_best = INFINITY;
    for (int i = 0; i < 40; ++i) {
      const std::string id = "t" + std::to_string(i);
      const Suggestion s = gp.suggest(id);
      REQUIRE(s.status == Suggestion::Status::kConfig);
      const Json result = trial(s.config);
      gp.on_trial_complete(id, &result, false);
      const bool feasible = result["constraints"].get<double>() <= 0;
      if (feasible) seed_best = std::min(seed_best, result["loss"].get<double>());
      feasible_late += feasible && i >= 20;
    }
    best.push_back(seed_best);
  }
  INFO("best feasible per seed: " << best[0] << ", " << best[1] << ", " << best[2]
                                  << "; feasible of the last 60: " << feasible_late);
  // A model blind to the constraint chases (0.8, 0.8): 8 of the 60 were feasible.
  CHECK(feasible_late >= 30);
  for (double b : best) CHECK(b < 0.21);  // without the constraint in the model: 0.24-0.28
}

TEST_CASE("gp: categorical one-hot, integers snapped, running trials spread out") {
  const ParamSpace space{
      {"x", uniform(-2, 2)}, {"n", randint(0, 10)}, {"kind", choice({"a", "b", "c"})}};
  auto loss = [](const Json& c) {
    return std::pow(c["x"].get<double>() - 1, 2) + std::abs(c["n"].get<int64_t>() - 7) +
           (c["kind"] == "c" ? 0 : 2);
  };
  GpSearcher gp(gp_options(40, 4));
  gp.set_search_properties("loss", Mode::kMin, space);
  const auto configs = run_sequential(gp, 30, loss);
  for (const Json& c : configs) CHECK(c["n"].is_number_integer());
  CHECK(testing::best_of(configs, loss) < 0.5);
  std::set<std::string> parallel;
  for (int i = 0; i < 4; ++i) parallel.insert(gp.suggest("p" + std::to_string(i)).config.dump());
  CHECK(parallel.size() == 4);
}

TEST_CASE("gp on an integer lattice: never a config that has run or is running") {
  // The refined points land between lattice points; rounded, several would
  // be a config that has run or is running unless scored where they run
  // and passed over when taken. 169 configs; the first 10 are random (and
  // may repeat), the next 24 and 6 in parallel are the GP's.
  const ParamSpace space{{"n", randint(0, 12)}, {"m", randint(0, 12)}};
  auto loss = [](const Json& c) {
    return std::pow(c["n"].get<int64_t>() - 7, 2) + std::pow(c["m"].get<int64_t>() - 3, 2);
  };
  for (uint64_t seed = 0; seed < 3; ++seed) {
    GpSearcher gp(gp_options(40, seed));
    gp.set_search_properties("loss", Mode::kMin, space);
    const auto configs = run_sequential(gp, 34, loss);
    std::set<std::string> seen;
    int repeats = 0;
    for (size_t i = 0; i < configs.size(); ++i) {
      repeats += !seen.insert(configs[i].dump()).second && i >= 10;
    }
    for (int i = 0; i < 6; ++i) {
      repeats += !seen.insert(gp.suggest("p" + std::to_string(i)).config.dump()).second;
    }
    CHECK(repeats == 0);
  }
}

TEST_CASE(
    "gp: one lengthscale per searchable dimension, a categorical's one-hot inputs sharing it") {
  const ParamSpace space{{"x", uniform(-2, 2)}, {"kind", choice({"a", "b", "c", "d"})}};
  auto loss = [](const Json& c) {
    return std::pow(c["x"].get<double>(), 2) + (c["kind"] == "b" ? 0 : 1);
  };
  GpOptions o = gp_options(15, 5);
  o.tpe_trials = 0;  // GP-BO's model from the eleventh trial
  GpSearcher gp(o);
  gp.set_search_properties("loss", Mode::kMin, space);
  run_sequential(gp, 12, loss);
  // theta: 2 lengthscales, the signal and the noise variance.
  CHECK(gp.save()["model"].size() == 4);
}

TEST_CASE("gp: leaves a near-best basin when a choice and a rate must change together") {
  // hpo_loss: 0 at adam with lr 10^-2.5; sgd's basin is 0.3 worse at a rate
  // a decade away, so leaving it for adam's changes the choice and the rate
  // at once. With the power transform's lambda fitted to the losses alone
  // (near a log), 22 of these 40 seeds got below 0.3 in 50 trials; with the
  // lambda the GP's evidence picks, 32.
  int reached = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    GpOptions o;
    o.base.num_samples = 50;
    o.base.seed = 1000 + seed;
    GpSearcher gp(o);
    gp.set_search_properties("loss", Mode::kMin, testing::hpo_space(true));
    const auto configs = run_sequential(gp, 50, testing::hpo_loss);
    reached += testing::best_of(configs, testing::hpo_loss) < 0.3;
  }
  CHECK(reached >= 28);
}

TEST_CASE("gp: a warm start's trials count as noisier by how far the repeated configs moved") {
  using Observation = ModelBasedSearcher::Observation;
  // Two earlier trials, one of whose configs ran again here 0.6 higher.
  const std::vector<Observation> obs = {{0, {0.2}, 1.0, {1.0}, 0, true},
                                        {0, {0.7}, 2.0, {2.0}, 0, true},
                                        {0, {0.2}, 1.6, {1.6}, 0, false},
                                        {1, {0.9}, 3.0, {3.0}, 0, false}};
  const detail::Repeats repeats = detail::find_repeats(obs);
  CHECK(repeats.prior_rows == std::vector<Eigen::Index>{0, 1});
  REQUIRE(repeats.pairs.size() == 1);
  const std::vector<double> targets = {1.0, 2.0, 1.6, 3.0};
  const Eigen::VectorXd extra = detail::prior_noise(targets, repeats);
  REQUIRE(extra.size() == 4);
  CHECK(extra[0] == doctest::Approx(0.36));
  CHECK(extra[1] == doctest::Approx(0.36));
  CHECK(extra[2] == 0);
  CHECK(extra[3] == 0);
  // Where both runs speak, this run's value outweighs the earlier one.
  Eigen::MatrixXd X(4, 1);
  X << 0.2, 0.7, 0.2, 0.9;
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(targets.data(), 4);
  Eigen::VectorXd theta(3);
  theta << std::log(0.3), 0.0, std::log(1e-6);
  const detail::GaussianProcess gp(X, y, theta, extra);
  Eigen::VectorXd mean, var;
  gp.predict(X.topRows(1), mean, var);
  CHECK(std::abs(mean[0] - 1.6) < 0.01);
  // Without a repeat, no extra noise.
  CHECK(detail::prior_noise(targets, detail::find_repeats({obs[0], obs[1], obs[3]})).size() == 0);
}

TEST_CASE("gp: after a warm start, a repeated config moves the earlier model's neighbourhood") {
  using Observation = ModelBasedSearcher::Observation;
  // The earlier function was x; this run's is x + 1, as two of its trials
  // (one at an earlier trial's config) say.
  std::vector<Observation> obs;
  for (const double x : {0.1, 0.3, 0.5, 0.7, 0.9}) obs.push_back({0, {x}, x, {x}, 0, true});
  obs.push_back({0, {0.5}, 1.5, {1.5}, 0, false});
  obs.push_back({1, {0.9}, 1.9, {1.9}, 0, false});
  std::vector<double> targets;
  Eigen::MatrixXd X(static_cast<Eigen::Index>(obs.size()), 1);
  for (size_t i = 0; i < obs.size(); ++i) {
    targets.push_back(obs[i].loss);
    X(static_cast<Eigen::Index>(i), 0) = obs[i].x[0];
  }
  Eigen::VectorXd theta(3);
  theta << std::log(0.3), 0.0, std::log(1e-6);
  const auto n = static_cast<Eigen::Index>(obs.size());
  detail::Departure d = detail::fit_departure(X, n, targets, detail::find_repeats(obs), theta, {0},
                                              {detail::GaussianProcess::default_theta(1)});
  const Eigen::MatrixXd own = X.bottomRows(2);
  const detail::GaussianProcess gp(own, Eigen::Vector2d(1.5, 1.9), d.theta, {}, d.prior);
  // Where only the earlier run measured (0.3): its value moved with the
  // neighbourhood, where this run has not been.
  Eigen::MatrixXd Q(2, 1);
  Q << 0.3, 0.5;
  Eigen::VectorXd mean, var;
  gp.predict(Q, mean, var);
  CHECK(mean[0] == doctest::Approx(1.3).epsilon(0.02));
  CHECK(mean[1] == doctest::Approx(1.5).epsilon(0.01));
}

TEST_CASE("gp: warm-started on a shifted Branin, reaches the earlier run's best within 20 trials") {
  // As benchmarks/warm_start: a 60-trial run, then the function shifted by
  // 0.3 in each coordinate (2% of the ranges). The earlier best lies within
  // about 1e-4 of each range of an optimum; searched only coarsely (local
  // candidates at 0.1 of each range, climb steps down to 1e-3), none of
  // these seeds got as close within 20 trials.
  // (benchmarks/warm_start measures the median.)
  const auto shifted = [](const Json& c) {
    Json moved = c;
    moved["x1"] = c["x1"].get<double>() - 0.3;
    moved["x2"] = c["x2"].get<double>() - 0.3;
    return branin(moved);
  };
  int reached = 0;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    GpOptions o;
    o.base.num_samples = 60;
    o.base.seed = seed;
    GpSearcher first(o);
    first.set_search_properties("loss", Mode::kMin, branin_space());
    std::vector<PriorTrial> prior;
    double target = INFINITY;
    for (const Json& config : run_sequential(first, 60, branin)) {
      target = std::min(target, branin(config));
      prior.push_back({config, Json{{"loss", branin(config)}}});
    }
    o.base.seed = seed + 1000;
    GpSearcher second(o);
    second.set_search_properties("loss", Mode::kMin, branin_space());
    second.warm_start(prior);
    reached += testing::best_of(run_sequential(second, 20, shifted), shifted) <= target;
  }
  CHECK(reached >= 3);
}

TEST_CASE("gp: with the optimum inside the box, no suggestion sits on a bound") {
  // A valley at 0.2 in every dim, near the lower faces: perturbations of
  // the best trials and climbs towards them reach past 0 often. A bound is
  // a point like any other, so an exact 0 or 1 would mean the search was
  // pushed there, not drawn.
  ParamSpace space;
  for (int d = 0; d < 4; ++d) space.set("x" + std::to_string(d), uniform(0, 1));
  auto f = [](const Json& c) {
    double sum = 0;
    for (int d = 0; d < 4; ++d) {
      const double x = c["x" + std::to_string(d)].get<double>();
      sum += std::sqrt(std::abs(x - 0.2));
    }
    return sum;
  };
  for (uint64_t seed : {1, 2}) {
    GpOptions o = gp_options(40, seed);
    o.tpe_trials = 0;
    GpSearcher s(o);
    s.set_search_properties("loss", Mode::kMin, space);
    int on_bound = 0;
    for (const Json& c : run_sequential(s, 40, f)) {
      for (int d = 0; d < 4; ++d) {
        const double x = c["x" + std::to_string(d)].get<double>();
        on_bound += x == 0 || x == 1;
      }
    }
    CHECK(on_bound == 0);
  }
}

TEST_CASE("gp: invalid options are ConfigErrors naming the option") {
  GpOptions o = gp_options(5, 0);
  o.n_candidates = 0;
  try {
    GpSearcher gp(o);
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "n_candidates");
  }
}

}  // namespace
}  // namespace tune::search
