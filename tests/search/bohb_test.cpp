#include "search/bohb.h"

#include <doctest/doctest.h>

#include <cmath>

#include "core/errors.h"
#include "search/factory.h"
#include "tests/search/searcher_test_util.h"

namespace tune::search {
namespace {

const ParamSpace& square() {
  static const ParamSpace space{{"x", uniform(0, 1)}, {"y", uniform(0, 1)}};
  return space;
}

// A loss whose best region is around (cx, cy).
double bowl(const Json& c, double cx, double cy) {
  return std::pow(c["x"].get<double>() - cx, 2) + std::pow(c["y"].get<double>() - cy, 2);
}

double distance(const Json& c, double cx, double cy) { return std::sqrt(bowl(c, cx, cy)); }

BohbOptions options(uint64_t seed, double random_fraction = 1.0 / 3) {
  BohbOptions o;
  o.base.num_samples = -1;
  o.base.seed = seed;
  o.random_fraction = random_fraction;
  return o;
}

// Runs `n` trials that report at iterations 1..`iterations` and are then
// stopped, as HyperBand stops a bracket's losers: the searcher sees their
// results through on_trial_result and a completion with the last one.
void run_stopped(Searcher& s, int n, int iterations, int first_id,
                 const std::function<double(const Json&, int)>& loss) {
  for (int i = 0; i < n; ++i) {
    const std::string id = "t" + std::to_string(first_id + i);
    const Suggestion sug = s.suggest(id);
    REQUIRE(sug.status == Suggestion::Status::kConfig);
    Json last;
    for (int t = 1; t <= iterations; ++t) {
      last = {{"loss", loss(sug.config, t)}, {"training_iteration", t}};
      s.on_trial_result(id, last);
    }
    s.on_trial_complete(id, &last, false);
  }
}

// The mean distance to (cx, cy) of `n` suggestions (left running).
double mean_distance(Searcher& s, int n, double cx, double cy) {
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const Suggestion sug = s.suggest("probe" + std::to_string(i));
    REQUIRE(sug.status == Suggestion::Status::kConfig);
    sum += distance(sug.config, cx, cy);
  }
  return sum / n;
}

TEST_CASE("bohb: trials stopped at the first rung teach the model") {
  BohbSearcher bohb(options(1, 0.0));
  bohb.set_search_properties("loss", Mode::kMin, square());
  CHECK(bohb.model_budget() == -1);
  // Every trial is stopped after one iteration: none ever reaches a full run.
  run_stopped(bohb, 30, 1, 0, [](const Json& c, int) { return bowl(c, 0.8, 0.3); });
  CHECK(bohb.model_budget() == 1);
  CHECK(bohb.results_at(1) == 30);
  // Random configs lie 0.4 from (0.8, 0.3) on average; the model's much closer.
  CHECK(mean_distance(bohb, 20, 0.8, 0.3) < 0.25);
}

TEST_CASE("bohb: fits the largest budget with enough results") {
  // Short runs favour (0.2, 0.2), long ones (0.8, 0.8): the model must
  // follow the long ones once min_points_in_model (dims + 2 = 4) reached it.
  const auto loss = [](const Json& c, int t) {
    return t < 9 ? bowl(c, 0.2, 0.2) : bowl(c, 0.8, 0.8);
  };
  BohbSearcher bohb(options(2, 0.0));
  bohb.set_search_properties("loss", Mode::kMin, square());
  run_stopped(bohb, 30, 3, 0, loss);
  CHECK(bohb.model_budget() == 3);
  CHECK(mean_distance(bohb, 10, 0.2, 0.2) < 0.25);
  run_stopped(bohb, 3, 9, 100, loss);
  CHECK(bohb.model_budget() == 3);  // three results at 9 are too few
  run_stopped(bohb, 12, 9, 200, loss);
  CHECK(bohb.model_budget() == 9);
  CHECK(bohb.results_at(9) == 15);
  CHECK(mean_distance(bohb, 20, 0.8, 0.8) < 0.3);
}

TEST_CASE("bohb: restore on a fresh searcher gives the same next suggestions") {
  const auto loss = [](const Json& c, int t) { return bowl(c, 0.7, 0.4) + 1.0 / t; };
  BohbSearcher a(options(3));
  a.set_search_properties("loss", Mode::kMin, square());
  run_stopped(a, 20, 3, 0, loss);
  REQUIRE(a.suggest("running").status == Suggestion::Status::kConfig);
  a.on_trial_result("running", {{"loss", 0.5}, {"training_iteration", 1}});
  const Json state = Json::parse(a.save().dump());
  BohbSearcher b(options(3));
  b.set_search_properties("loss", Mode::kMin, square());
  b.restore(state);
  CHECK(b.model_budget() == a.model_budget());
  CHECK(b.results_at(1) == a.results_at(1));
  std::vector<Json> from_a, from_b;
  for (int i = 0; i < 8; ++i) {
    from_a.push_back(a.suggest("n" + std::to_string(i)).config);
    from_b.push_back(b.suggest("n" + std::to_string(i)).config);
  }
  CHECK(from_a == from_b);
}

TEST_CASE("bohb: the factory builds it and names a bad option") {
  auto s = make_searcher("bohb", {{"min_points_in_model", 5}, {"random_fraction", 0.5}},
                         {.num_samples = 10, .seed = 0});
  s->set_search_properties("loss", Mode::kMin, square());
  CHECK(s->suggest("a").status == Suggestion::Status::kConfig);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, Json>>{{"min_points_in_model", 2},
                                                 {"top_fraction", 1.0},
                                                 {"random_fraction", 1.5},
                                                 {"n_candidates", 0},
                                                 {"n_startup_trials", 5}}) {
    CAPTURE(key);
    try {
      make_searcher("bohb", {{key, value}}, {.num_samples = 10, .seed = 0});
      FAIL("expected ConfigError");
    } catch (const ConfigError& e) {
      CHECK(e.key() == key);
    }
  }
}

}  // namespace
}  // namespace tune::search
