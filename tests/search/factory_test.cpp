#include "search/factory.h"

#include <doctest/doctest.h>

#include "core/errors.h"
#include "search/internal/basic_variant.h"
#include "search/internal/concurrency_limiter.h"
#include "search/internal/tpe.h"

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
  CHECK(message ==
        "unknown option for searcher 'random'; known: repeat, max_concurrent, seed, "
        "points_to_evaluate");

  CHECK(factory_error("random", {{"seed", "1"}}).first == "seed");
  CHECK(factory_error("random", {{"seed", -1}}).first == "seed");
  CHECK(factory_error("random", {{"seed", 1.5}}).first == "seed");
  CHECK(factory_error("random", {{"points_to_evaluate", 1}}).first == "points_to_evaluate");
  CHECK(factory_error("random", {{"points_to_evaluate", {1, 2}}}).first == "points_to_evaluate");
}

TEST_CASE("tpe and gp take their options, and num_samples as their budget") {
  const SearcherContext context{.num_samples = 12, .seed = 3};
  auto tpe = make_searcher("tpe",
                           {{"n_startup_trials", 5},
                            {"n_ei_candidates", 10},
                            {"gamma", 0.2},
                            {"gamma_cap", 10},
                            {"prior_weight", 2.0},
                            {"multivariate", true},
                            {"bandwidth", "scott"},
                            {"weighting", "optuna"},
                            {"constant_liar", false}},
                           context);
  CHECK(dynamic_cast<TpeSearcher*>(tpe.get()) != nullptr);
  auto gp = make_searcher("gp", {{"n_candidates", 50}, {"fit_restarts", 1}}, context);
  for (auto* s : {tpe.get(), gp.get()}) {
    s->set_search_properties("loss", Mode::kMin, kSpace);
    int n = 0;
    for (Suggestion x = s->suggest("t0"); x.status == Suggestion::Status::kConfig;
         x = s->suggest("t" + std::to_string(++n))) {
      const Json result{{"loss", x.config["lr"].get<double>()}};
      s->on_trial_complete("t" + std::to_string(n), &result, false);
    }
    CHECK(n == 12);
  }
  CHECK(factory_error("tpe", {{"gamma", 2}}).first == "gamma");
  CHECK(factory_error("tpe", {{"multivariate", 1}}).first == "multivariate");
  CHECK(factory_error("tpe", {{"n_candidates", 1}}).first == "n_candidates");
  const auto [key, message] = factory_error("tpe", {{"bandwidth", "silverman"}});
  CHECK(key == "bandwidth");
  CHECK(message == R"(expected one of "neighbour", "scott", "auto", got "silverman")");
  CHECK(factory_error("tpe", {{"weighting", 1}}).first == "weighting");
  CHECK(factory_error("gp", {{"n_ei_candidates", 1}}).first == "n_ei_candidates");
  CHECK(factory_error("gp", {{"incumbent", "worst"}}).first == "incumbent");
  CHECK(factory_error("gp", {{"tpe_trials", -1}}).first == "tpe_trials");
  CHECK(factory_error("bayesopt", {{"n_startup_trials", 0}}).first == "n_startup_trials");
}

TEST_CASE("repeat and max_concurrent wrap any searcher") {
  auto limited = make_searcher("tpe", {{"max_concurrent", 2}}, {.num_samples = 6});
  auto* limiter = dynamic_cast<ConcurrencyLimiter*>(limited.get());
  REQUIRE(limiter != nullptr);
  limited->set_search_properties("loss", Mode::kMin, kSpace);
  CHECK(limited->suggest("a").status == Suggestion::Status::kConfig);
  CHECK(limited->suggest("b").status == Suggestion::Status::kConfig);
  CHECK(limited->suggest("c").status == Suggestion::Status::kNotReady);

  auto repeated = make_searcher("random", {{"repeat", 2}}, {.num_samples = 4, .seed = 1});
  const auto configs = run(*repeated);  // 2 grid cells x 4 samples / 2 repeats x 2
  REQUIRE(configs.size() == 8);
  CHECK(configs[0]["lr"] == configs[1]["lr"]);
  CHECK(configs[0]["lr"] != configs[2]["lr"]);
  CHECK(factory_error("random", {{"repeat", 3}}).first == "repeat");  // 1 % 3 != 0
  CHECK(factory_error("random", {{"repeat", 0}}).first == "repeat");
  CHECK(factory_error("random", {{"max_concurrent", 0}}).first == "max_concurrent");
}

}  // namespace
}  // namespace tune::search

namespace tune::search {

TEST_CASE("every searcher says its kind as a sweep file names it; a user's class is custom") {
  CHECK(tune::search::tpe()->kind() == "tpe");
  CHECK(tune::search::gp()->kind() == "gp");
  CHECK(tune::search::bohb()->kind() == "bohb");
  CHECK(tune::search::motpe()->kind() == "motpe");
  CHECK(tune::search::nsga2()->kind() == "nsga2");
  CHECK(make_searcher("random", Json::object(), {})->kind() == "random");
  CHECK(make_searcher("bayesopt", Json::object(), {})->kind() == "gp");
  // The wrappers say the kind of the searcher they wrap.
  CHECK(make_searcher("bohb", Json{{"repeat", 2}, {"max_concurrent", 2}}, {.num_samples = 4})
            ->kind() == "bohb");
  struct Mine final : Searcher {
    void set_search_properties(const std::string&, Mode, const ParamSpace&) override {}
    Suggestion suggest(const std::string&) override { return Suggestion::finished(); }
    Json save() const override { return Json::object(); }
    void restore(const Json&) override {}
  };
  CHECK(Mine().kind() == "custom");
}

}  // namespace tune::search
