// PB2: the GP bandit picks new values within hyperparam_bounds and, on a
// synthetic problem, in the region that improves faster.
#include "schedulers/internal/pb2.h"

#include <doctest/doctest.h>

#include "schedulers/internal/tv_gp.h"
#include "tests/schedulers/trace.h"

using namespace tune;
using namespace tune::schedulers;
using namespace tune::schedulers::testing;

namespace {

// Score gained per iteration: clearly better for x above 0.6.
double rate(double x) { return x > 0.6 ? 1.0 : 0.2 * x; }

struct Run {
  std::vector<double> picked;  // the x of every exploit
  std::vector<std::string> donors;
};

// A population of 8 whose x spans [lo, hi] at first, gaining `gain(x)` per step.
Run run_population(uint64_t seed, int rounds, double lo = 0, double hi = 1,
                   double (*gain)(double) = rate) {
  Pb2Scheduler s({.time_attr = "training_iteration",
                  .perturbation_interval = 1,
                  .hyperparam_bounds = Json{{"x", {lo, hi}}},
                  .seed = seed});
  s.set_search_properties("score", Mode::kMax);
  Trace t(s);
  const int n = 8;
  std::map<std::string, double> score;
  for (int i = 0; i < n; ++i) {
    const std::string id = "t" + std::to_string(i);
    t.add(id, {{"x", lo + (hi - lo) * (0.05 + 0.9 * i / (n - 1))}, {"fixed", 1}});
    t.choose({id});
    score[id] = 0;
  }
  Run run;
  for (int step = 1; step <= rounds; ++step) {
    for (auto it = score.rbegin(); it != score.rend(); ++it) {  // the best first
      auto& [id, value] = *it;
      value += gain(t.config(id)["x"].get<double>());
      const Decision d = t.report(id, step, value);
      if (d != kPause) continue;
      if (auto e = s.take_exploit(id)) {
        CHECK(e->new_config["fixed"] == 1);
        t.set_config(id, e->new_config);
        value = score[e->donor_id];  // the clone starts from the donor's state
        if (step >= 3) run.picked.push_back(e->new_config["x"].get<double>());  // rates known
        run.donors.push_back(e->donor_id);
      }
      t.choose({id});
    }
  }
  return run;
}

}  // namespace

TEST_CASE("PB2 picks values within the bounds, mostly in the better region") {
  int better = 0, total = 0;
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    const Run run = run_population(seed, 6);
    CHECK(!run.picked.empty());
    for (double x : run.picked) {
      CHECK(x >= 0.0);
      CHECK(x <= 1.0);
      better += x > 0.6;
      ++total;
    }
  }
  // Uniform picks would land above 0.6 four times in ten (sd 0.07 over 48
  // picks); UCB still explores, so not every pick is in the better region.
  CHECK(better >= 0.6 * total);
}

TEST_CASE("PB2 keeps its picks inside bounds that float32 rounds past") {
  // float32(0.0001) is 9.99999975e-05: a pick at the lower bound must stay 0.0001.
  auto smaller_is_better = [](double x) { return 1.0 - x / 0.02; };
  int at_lower = 0;
  for (uint64_t seed : {1, 2, 3}) {
    for (double x : run_population(seed, 6, 0.0001, 0.02, smaller_is_better).picked) {
      CHECK(x >= 0.0001);
      CHECK(x <= 0.02);
      at_lower += x == 0.0001;
    }
  }
  CHECK(at_lower > 0);  // the case in question happened
}

TEST_CASE("PB2 without data on the donor keeps the donor's values, as Ray") {
  Pb2Scheduler s({.time_attr = "training_iteration",
                  .perturbation_interval = 1,
                  .hyperparam_bounds = Json::parse(R"({"x": [0, 1]})")});
  s.set_search_properties("score", Mode::kMax);
  Trace t(s);
  t.add("a", {{"x", 0.9}}), t.choose({"a"});
  t.add("b", {{"x", 0.1}}), t.choose({"b"});
  CHECK(t.report("a", 1, 1.0) == kContinue);
  CHECK(t.report("b", 1, 0.0) == kPause);  // first point: no improvement rates yet
  CHECK(s.take_exploit("b")->new_config == Json{{"x", 0.9}});
}

TEST_CASE("PB2 GP fits an improvement that depends on the values") {
  // y = 1 for h > 0.5, else 0; the fitted mean separates the two halves.
  const int n = 20;
  Eigen::MatrixXd x(n, 3);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    const double h = (i + 0.5) / n;
    x(i, 0) = 0.5, x(i, 1) = 0.5, x(i, 2) = h;
    y[i] = h > 0.5 ? 1.0 : -1.0;
  }
  const auto params = detail::fit_tv_gp(x, y);
  CHECK(params.lengthscale <= 1.0);
  detail::TvGp gp(x, y, params);
  Eigen::VectorXd lo(3), hi(3);
  lo << 0.5, 0.5, 0.1;
  hi << 0.5, 0.5, 0.9;
  CHECK(gp.predict(hi).first > gp.predict(lo).first + 0.5);
  Rng rng(5);
  Eigen::VectorXd fixed(2);
  fixed << 0.5, 0.5;
  const Eigen::VectorXd best = detail::optimize_ucb(gp, gp, fixed, 1, rng);
  CHECK(best[0] > 0.5);
}

TEST_CASE("PB2 save and restore continue with identical exploits") {
  auto make = [] {
    return Pb2Scheduler({.time_attr = "training_iteration",
                         .perturbation_interval = 1,
                         .hyperparam_bounds = Json::parse(R"({"x": [0, 1]})"),
                         .seed = 4});
  };
  Pb2Scheduler s1 = make(), s2 = make();
  s1.set_search_properties("score", Mode::kMax);
  s2.set_search_properties("score", Mode::kMax);
  Trace t1(s1), t2(s2);
  for (int i = 0; i < 4; ++i) {
    const std::string id = "t" + std::to_string(i);
    const Json c{{"x", 0.2 * (i + 1)}};
    t1.add(id, c), t2.add(id, c), t1.choose({id}), t2.choose({id});
  }
  for (int i = 0; i < 4; ++i) t1.report("t" + std::to_string(i), 1, i);
  round_trip(s1, s2);
  for (int step = 2; step <= 4; ++step) {
    for (int i = 0; i < 4; ++i) {
      const std::string id = "t" + std::to_string(i);
      const double v = step * (i + 1) * 0.5;
      CHECK(t1.report(id, step, v) == t2.report(id, step, v));
      auto e1 = s1.take_exploit(id), e2 = s2.take_exploit(id);
      REQUIRE(e1.has_value() == e2.has_value());
      if (e1) CHECK(e1->new_config == e2->new_config);
    }
  }
}
