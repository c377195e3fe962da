#include "core/config.h"

#include <doctest/doctest.h>

using tune::Config;
using tune::ConfigError;
using tune::Json;

TEST_CASE("config reads values, nested keys by dots, and defaults") {
  Config config(Json{{"lr", 0.01}, {"layers", 3}, {"name", "mlp"}, {"model", {{"width", 64}}}});
  CHECK(config.get<double>("lr") == doctest::Approx(0.01));
  CHECK(config.get<int64_t>("layers") == 3);
  CHECK(config.get<double>("layers") == 3.0);  // integers widen to floating point
  CHECK(config.get<std::string>("name") == "mlp");
  CHECK(config.get<int>("model.width") == 64);
  CHECK(config.get<int>("model.depth", 2) == 2);
  CHECK(config.contains("model.width"));
  CHECK_FALSE(config.contains("model.width.x"));
}

TEST_CASE("config errors name the key") {
  Config config(Json{{"lr", 0.01}, {"layers", 3}});
  CHECK_THROWS_WITH_AS(config.get<double>("momentum"), doctest::Contains("key 'momentum'"),
                       ConfigError);
  // A float never silently truncates to an integer.
  CHECK_THROWS_WITH_AS(config.get<int64_t>("lr"), doctest::Contains("expected an integer"),
                       ConfigError);
  CHECK_THROWS_AS(config.get<std::string>("layers"), ConfigError);
  CHECK_THROWS_AS(Config(Json::array()), ConfigError);
}

TEST_CASE("config error message carries file, line and key") {
  ConfigError e("expected a number", "sweep.toml", 12, "param_space.lr");
  CHECK(std::string(e.what()) == "sweep.toml:12: key 'param_space.lr': expected a number");
  CHECK(e.line() == 12);
  CHECK(e.key() == "param_space.lr");
}
