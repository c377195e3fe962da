#include "search/factory.h"

#include <doctest/doctest.h>

#include "core/errors.h"
#include "search/basic_variant.h"

namespace tune::search {
namespace {

const ParamSpace kSpace{{"lr", uniform(0, 1)}, {"batch", grid_search({32, 64})}};

std::vector<Json> run(Searcher& searcher) {
  searcher.set_search_properties("loss", Mode::kMin, kSpace);
  std::vector<Json> out;
  for (Suggestion s = searcher.suggest("t"); s.status == Suggestion::Status::kConfig;
       s = searcher.suggest("t")) {
    out.push_back(s.config);
  }
  return out;
}

// The ConfigError that make_searcher throws, as (key, message).
std::pair<std::string, std::string> factory_error(const std::string& algorithm,
                                                  const Json& options) {
  try {
    make_searcher(algorithm, options, {});
  } catch (const ConfigError& e) {
    return {e.key(), e.message()};
  }
  FAIL("expected ConfigError");
  return {};
}

TEST_CASE("random, basic and grid build the same basic variant generator") {
  const SearcherContext context{.num_samples = 2, .seed = 4};
  auto random = make_searcher("random", Json::object(), context);
  auto basic = make_searcher("basic", Json::object(), context);
  auto grid = make_searcher("grid", nullptr, context);
  const auto configs = run(*random);
  CHECK(configs.size() == 4);
  CHECK(configs == run(*basic));
  CHECK(configs == run(*grid));
}

TEST_CASE("the seed option overrides the experiment's seed") {
  auto from_context = make_searcher("random", Json::object(), {.num_samples = 2, .seed = 9});
  auto from_option = make_searcher("random", {{"seed", 9}}, {.num_samples = 2, .seed = 1});
  auto other = make_searcher("random", {{"seed", 10}}, {.num_samples = 2, .seed = 9});
  const auto configs = run(*from_context);
  CHECK(configs == run(*from_option));
  CHECK(configs != run(*other));
}

TEST_CASE("points_to_evaluate are passed through") {
  auto searcher = make_searcher("random", {{"points_to_evaluate", {{{"lr", 0.5}}}}}, {});
  const auto configs = run(*searcher);
  REQUIRE(configs.size() == 3);
  CHECK(configs[0]["lr"] == 0.5);
}

TEST_CASE("errors name the offending key") {
  auto [key, message] = factory_error("bayes", Json::object());
  CHECK(key == "algorithm");
  CHECK(message.find("random, basic, grid") != std::string::npos);

  std::tie(key, message) = factory_error("random", {{"sed", 1}});
  CHECK(key == "sed");
  CHECK(message == "unknown option for searcher 'random'; known: seed, points_to_evaluate");

  CHECK(factory_error("random", {{"seed", "1"}}).first == "seed");
  CHECK(factory_error("random", {{"seed", -1}}).first == "seed");
  CHECK(factory_error("random", {{"seed", 1.5}}).first == "seed");
  CHECK(factory_error("random", {{"points_to_evaluate", 1}}).first == "points_to_evaluate");
  CHECK(factory_error("random", {{"points_to_evaluate", {1, 2}}}).first == "points_to_evaluate");
}

}  // namespace
}  // namespace tune::search
