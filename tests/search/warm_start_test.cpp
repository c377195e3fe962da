// Warm starts through the Searcher interface: an earlier experiment's best
// configs run again first, its trials count toward the model's start-up,
// trials that do not fit are left out, and the configs run again say how
// far the function has moved.
#include <doctest/doctest.h>

#include "search/factory.h"
#include "tests/search/objectives.h"

using tune::Json;
using tune::Mode;
using tune::search::PriorTrial;

namespace {

std::vector<PriorTrial> earlier_trials() {
  std::vector<PriorTrial> out;
  for (int i = 0; i < 12; ++i) {
    const Json config = {{"x1", -5.0 + i}, {"x2", 1.0 + i}};
    out.push_back({config, {{"loss", tune::search::testing::branin(config)}}});
  }
  out.push_back({{{"x1", 99.0}, {"x2", 1.0}}, {{"loss", 0.0}}});  // outside the space
  out.push_back({{{"x1", 0.0}, {"x2", 1.0}}, {{"other", 0.0}}});  // no loss
  return out;
}

}  // namespace

TEST_CASE("a warm-started searcher runs the earlier best configs first and skips its start-up") {
  for (const std::string algorithm : {"tpe", "gp", "motpe"}) {
    CAPTURE(algorithm);
    auto s = tune::search::make_searcher(algorithm, Json::object(), {20, 1});
    s->set_search_properties("loss", Mode::kMin, tune::search::testing::branin_space());
    const auto prior = earlier_trials();
    CHECK(s->warm_start(prior) == 12);
    std::vector<std::pair<double, Json>> ranked;
    for (size_t i = 0; i < 12; ++i) ranked.emplace_back(prior[i].result["loss"], prior[i].config);
    std::sort(ranked.begin(), ranked.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (int i = 0; i < 3; ++i) {
      const auto suggestion = s->suggest("t" + std::to_string(i));
      CHECK(suggestion.config == ranked[i].second);
    }
    // The history holds them: twelve, more than the ten random trials the
    // models start with.
    CHECK(s->save()["observations"].size() == 12);
  }
}

TEST_CASE("random search ignores a warm start") {
  auto s = tune::search::make_searcher("random", Json::object(), {5, 1});
  s->set_search_properties("loss", Mode::kMin, tune::search::testing::branin_space());
  CHECK(s->warm_start(earlier_trials()) == 0);
}

TEST_CASE("the earlier trials' values move by as much as the repeated configs' did at most") {
  for (const std::string algorithm : {"tpe", "gp"}) {
    CAPTURE(algorithm);
    auto s = tune::search::make_searcher(algorithm, Json::object(), {20, 1});
    s->set_search_properties("loss", Mode::kMin, tune::search::testing::branin_space());
    const auto prior = earlier_trials();
    REQUIRE(s->warm_start(prior) == 12);
    // The function got worse by 4 at the first repeat and by 2 at the
    // second: the earlier values move by the larger.
    for (const double moved : {4.0, 2.0}) {
      const std::string id = "repeat" + std::to_string(moved);
      const Json config = s->suggest(id).config;
      const Json result = {{"loss", tune::search::testing::branin(config) + moved}};
      s->on_trial_complete(id, &result, false);
    }
    const Json state = s->save();
    CHECK(state["prior_offset"] == Json::array({4.0}));
    for (size_t i = 0; i < 12; ++i) {
      CHECK(state["observations"][i]["loss"].get<double>() ==
            doctest::Approx(prior[i].result["loss"].get<double>() + 4));
    }
    // A resumed experiment (warm-started again, then restored) keeps the offset.
    auto restored = tune::search::make_searcher(algorithm, Json::object(), {20, 1});
    restored->set_search_properties("loss", Mode::kMin, tune::search::testing::branin_space());
    restored->warm_start(prior);
    restored->restore(state);
    CHECK(restored->save() == state);
    CHECK(restored->suggest("next").config == s->suggest("next").config);
  }
}
