#include "search/param_space.h"

#include <doctest/doctest.h>

#include <set>

#include "core/errors.h"

namespace tune {
namespace {

TEST_CASE("resolve replaces every domain, copies constants and nests tables") {
  const ParamSpace space{{"lr", loguniform(1e-4, 1e-1)},
                         {"epochs", 10},
                         {"optimizer", "adam"},
                         {"model", ParamSpace{{"width", choice({64, 128})}, {"depth", 3}}}};
  Rng rng(1);
  const Json config = space.resolve(0, rng);
  CHECK(config.size() == 4);
  CHECK(config["lr"].is_number_float());
  CHECK(config["epochs"] == 10);
  CHECK(config["optimizer"] == "adam");
  REQUIRE(config["model"].is_object());
  CHECK(config["model"]["depth"] == 3);
  CHECK((config["model"]["width"] == 64 || config["model"]["width"] == 128));
}

TEST_CASE("grid cells: count is the product, first grid key varies slowest") {
  const ParamSpace space{{"a", grid_search({1, 2})},
                         {"lr", uniform(0, 1)},
                         {"nested", ParamSpace{{"b", grid_search({"x", "y", "z"})}}}};
  REQUIRE(space.num_grid_cells() == 6);
  const auto grid = space.grid_domains();
  REQUIRE(grid.size() == 2);
  CHECK(grid[0].first == "a");
  CHECK(grid[1].first == "nested.b");

  std::vector<std::pair<int, std::string>> cells;
  Rng rng(0);
  for (size_t cell = 0; cell < 6; ++cell) {
    const Json config = space.resolve(cell, rng);
    cells.emplace_back(config["a"].get<int>(), config["nested"]["b"].get<std::string>());
  }
  const std::vector<std::pair<int, std::string>> expected{{1, "x"}, {1, "y"}, {1, "z"},
                                                          {2, "x"}, {2, "y"}, {2, "z"}};
  CHECK(cells == expected);
  CHECK_THROWS_AS(space.resolve(6, rng), Error);
}

TEST_CASE("a space without grid_search has one cell") {
  const ParamSpace space{{"lr", uniform(0, 1)}};
  CHECK(space.num_grid_cells() == 1);
  CHECK(ParamSpace{}.num_grid_cells() == 1);
}

TEST_CASE("draw order follows insertion order, not key names") {
  // Same domains under different names draw the same values in the same order.
  const ParamSpace first{{"z", uniform(0, 1)}, {"a", uniform(0, 1)}};
  const ParamSpace second{{"a", uniform(0, 1)}, {"b", uniform(0, 1)}};
  Rng r1(9), r2(9);
  const Json c1 = first.resolve(0, r1);
  const Json c2 = second.resolve(0, r2);
  CHECK(c1["z"] == c2["a"]);
  CHECK(c1["a"] == c2["b"]);
}

TEST_CASE("set replaces an existing key in place and rejects bad keys") {
  ParamSpace space{{"a", 1}, {"b", 2}};
  space.set("a", uniform(0, 1));
  space.set("c", 3);
  REQUIRE(space.entries().size() == 3);
  CHECK(space.entries()[0].first == "a");
  CHECK(space.entries()[0].second.domain() != nullptr);
  CHECK(space.entries()[2].first == "c");

  CHECK_THROWS_AS(space.set("", 1), ConfigError);
  try {
    space.set("model.width", 1);
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "model.width");
  }
}

TEST_CASE("describe shows domains as strings, constants as values") {
  const ParamSpace space{{"lr", loguniform(1e-4, 0.1)},
                         {"epochs", 10},
                         {"model", ParamSpace{{"width", grid_search({64, 128})}}}};
  const Json expected = {{"lr", "loguniform(0.0001, 0.1)"},
                         {"epochs", 10},
                         {"model", {{"width", "grid_search([64,128])"}}}};
  CHECK(space.describe() == expected);
}

}  // namespace
}  // namespace tune
