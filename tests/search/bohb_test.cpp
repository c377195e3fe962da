#include "search/internal/bohb.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>

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

// Runs `n` trials as ASHA with one rung at budget 1 would: each reports at
// 1, and those in the best third of all results at 1 so far run on to
// `high`; the rest are stopped at 1.
void run_one_rung(Searcher& s, int n, int high,
                  const std::function<double(const Json&, int)>& loss) {
  std::vector<double> at_1;
  for (int i = 0; i < n; ++i) {
    const std::string id = "t" + std::to_string(i);
    const Suggestion sug = s.suggest(id);
    REQUIRE(sug.status == Suggestion::Status::kConfig);
    Json last = {{"loss", loss(sug.config, 1)}, {"training_iteration", 1}};
    s.on_trial_result(id, last);
    at_1.push_back(loss(sug.config, 1));
    std::vector<double> sorted = at_1;
    std::sort(sorted.begin(), sorted.end());
    if (at_1.back() <= sorted[(sorted.size() - 1) / 3]) {
      for (int t = 2; t <= high; ++t) {
        last = {{"loss", loss(sug.config, t)}, {"training_iteration", t}};
        s.on_trial_result(id, last);
      }
    }
    s.on_trial_complete(id, &last, false);
  }
}

// Over seeds 1..6: BOHB runs `loss` through run_one_rung (60 trials, on to
// 9). The mean distance of its next suggestions to (cx, cy), and the
// largest and smallest weight it gives the trials stopped at 1.
struct OneRung {
  double distance = 0, max_weight = 0, min_weight = 1;
};
OneRung one_rung(const std::function<double(const Json&, int)>& loss, double cx, double cy) {
  OneRung out;
  constexpr int kSeeds = 6;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    BohbSearcher bohb(options(seed, 0.0));
    bohb.set_search_properties("loss", Mode::kMin, square());
    run_one_rung(bohb, 60, 9, loss);
    REQUIRE(bohb.model_budget() == 9);
    out.max_weight = std::max(out.max_weight, bohb.stopped_weight(1));
    out.min_weight = std::min(out.min_weight, bohb.stopped_weight(1));
    out.distance += mean_distance(bohb, 20, cx, cy) / kSeeds;
  }
  return out;
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

TEST_CASE("bohb: fits the largest budget with enough results, stopped trials counting") {
  // Short runs favour (0.2, 0.2), long ones (0.8, 0.8).
  const auto loss = [](const Json& c, int t) {
    return t < 9 ? bowl(c, 0.2, 0.2) : bowl(c, 0.8, 0.8);
  };
  BohbSearcher bohb(options(2, 0.0));
  bohb.set_search_properties("loss", Mode::kMin, square());
  // While no trial has ended, BOHB's rule: the largest budget with
  // min_points_in_model (dims + 2 = 4) results.
  std::vector<std::string> running;
  for (int i = 0; i < 30; ++i) {
    running.push_back("r" + std::to_string(i));
    const Json c = bohb.suggest(running.back()).config;
    for (int t = 1; t <= (i < 3 ? 9 : 3); ++t) {
      bohb.on_trial_result(running.back(), {{"loss", loss(c, t)}, {"training_iteration", t}});
    }
  }
  CHECK(bohb.results_at(9) == 3);
  CHECK(bohb.model_budget() == 3);  // three results at 9 are too few
  CHECK(mean_distance(bohb, 10, 0.2, 0.2) < 0.25);
  // Once the scheduler has stopped the others at 3, they count at 9 too:
  // three results there (two for l, one for g) are then enough.
  for (const std::string& id : running) bohb.on_trial_complete(id, nullptr, false);
  CHECK(bohb.model_budget() == 9);
  run_stopped(bohb, 12, 9, 200, loss);
  CHECK(bohb.model_budget() == 9);
  CHECK(bohb.results_at(9) == 15);
  // Budgets 1 to 3 favour (0.2, 0.2); the model follows budget 9's (0.8, 0.8).
  double to_long = 0, to_short = 0;
  for (int i = 0; i < 20; ++i) {
    const Json c = bohb.suggest("next" + std::to_string(i)).config;
    to_long += distance(c, 0.8, 0.8);
    to_short += distance(c, 0.2, 0.2);
  }
  CHECK(to_long < 0.7 * to_short);
}

TEST_CASE("bohb: a low budget that ranks trials unlike the high one loses its weight") {
  // Budget 1 favours (0.2, 0.2), budget 9 (0.8, 0.8), as a learning rate
  // that starts fast and plateaus low misleads the first rung. The trials
  // that rung stops lie towards (0.8, 0.8): counted as losers, they would
  // steer the model away from what budget 9 says (mean distance 0.47).
  const OneRung r = one_rung(
      [](const Json& c, int t) { return t < 9 ? bowl(c, 0.2, 0.2) : bowl(c, 0.8, 0.8); }, 0.8, 0.8);
  CHECK(r.max_weight < 0.25);
  CHECK(r.distance < 0.35);
}

TEST_CASE("bohb: a low budget that ranks trials as the high one does keeps them in the model") {
  // The same ranking at every budget. The trials that reach 9 all lie near
  // the best region, so without the stopped ones to say where not to go the
  // model at 9 leaves it (mean distance 0.58, worse than random's 0.4).
  const OneRung r =
      one_rung([](const Json& c, int t) { return bowl(c, 0.7, 0.3) + 1.0 / t; }, 0.7, 0.3);
  CHECK(r.min_weight > 0.8);
  CHECK(r.distance < 0.3);
}

TEST_CASE("bohb: restore on a fresh searcher gives the same next suggestions") {
  const auto loss = [](const Json& c, int t) { return bowl(c, 0.7, 0.4) + 1.0 / t; };
  BohbSearcher a(options(3));
  a.set_search_properties("loss", Mode::kMin, square());
  run_stopped(a, 20, 3, 0, loss);
  run_stopped(a, 3, 9, 100, loss);  // the model is at 9 only if the 20 count as stopped
  REQUIRE(a.suggest("running").status == Suggestion::Status::kConfig);
  a.on_trial_result("running", {{"loss", 0.5}, {"training_iteration", 1}});
  const Json state = Json::parse(a.save().dump());
  BohbSearcher b(options(3));
  b.set_search_properties("loss", Mode::kMin, square());
  b.restore(state);
  CHECK(a.model_budget() == 9);
  CHECK(b.model_budget() == a.model_budget());
  CHECK(b.results_at(1) == a.results_at(1));
  CHECK(b.stopped_weight(3) == a.stopped_weight(3));
  std::vector<Json> from_a, from_b;
  for (int i = 0; i < 8; ++i) {
    from_a.push_back(a.suggest("n" + std::to_string(i)).config);
    from_b.push_back(b.suggest("n" + std::to_string(i)).config);
  }
  CHECK(from_a == from_b);
}

TEST_CASE("bohb: a state saved without trial ends restores its trials as running") {
  BohbSearcher a(options(6));
  a.set_search_properties("loss", Mode::kMin, square());
  run_stopped(a, 20, 3, 0, [](const Json& c, int t) { return bowl(c, 0.5, 0.5) + 1.0 / t; });
  Json state = a.save();
  for (Json& t : state["model"]["trials"]) t.erase("ended");
  BohbSearcher b(options(6));
  b.set_search_properties("loss", Mode::kMin, square());
  b.restore(state);
  CHECK(b.results_at(3) == 20);
  CHECK(b.model_budget() == 3);
}

TEST_CASE("bohb: a last result that only comes with the completion is recorded") {
  BohbSearcher bohb(options(7));
  bohb.set_search_properties("loss", Mode::kMin, square());
  for (int i = 0; i < 5; ++i) {
    const std::string id = "t" + std::to_string(i);
    const Json c = bohb.suggest(id).config;
    const Json last = {{"loss", bowl(c, 0.5, 0.5)}, {"training_iteration", 4}};
    bohb.on_trial_complete(id, &last, false);
  }
  CHECK(bohb.results_at(4) == 5);
  CHECK(bohb.model_budget() == 4);
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
