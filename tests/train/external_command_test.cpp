// The pieces of external command trainables that need no worker: argument
// placeholders, parameter variable names and the @tunerun line protocol.
// End-to-end runs are in tests/tune/external_command_test.cpp.
#include "train/external_command.h"

#include <doctest/doctest.h>

#include <cmath>

#include "core/errors.h"

using train::detail::fill_placeholders;
using train::detail::parse_report_line;
using tune::Json;

TEST_CASE("placeholders take config values, nested keys and escaped braces") {
  const Json config = {{"lr", 0.001},     {"small", 1e-05},
                       {"layers", 3},     {"act", "relu"},
                       {"flag", true},    {"model", {{"width", 64}, {"name", "a b"}}},
                       {"sizes", {1, 2}}, {"dotted.key", "literal"}};
  CHECK(fill_placeholders("--lr={lr}", config) == "--lr=0.001");
  CHECK(fill_placeholders("{small}", config) == "1e-05");
  CHECK(fill_placeholders("{layers}x{act}", config) == "3xrelu");
  CHECK(fill_placeholders("{flag}", config) == "true");
  CHECK(fill_placeholders("{model.width}-{model.name}", config) == "64-a b");
  CHECK(fill_placeholders("{sizes}", config) == "[1,2]");
  CHECK(fill_placeholders("{model}", config) == R"({"name":"a b","width":64})");
  CHECK(fill_placeholders("{dotted.key}", config) == "literal");  // a top-level key first
  CHECK(fill_placeholders("{{lr}} {{{lr}}} }}", config) == "{lr} {0.001} }");
  CHECK(fill_placeholders("no placeholders } here", config) == "no placeholders } here");
}

TEST_CASE("a placeholder the config lacks names the key and the keys there are") {
  const Json config = {{"lr", 0.1}, {"model", {{"width", 64}}}};
  try {
    fill_placeholders("--lr={lrr}", config);
    FAIL("expected a ConfigError");
  } catch (const tune::ConfigError& e) {
    CHECK(e.key() == "lrr");
    CHECK(std::string(e.what()).find("names {lrr}, which the config lacks; its keys: lr, model") !=
          std::string::npos);
  }
  CHECK_THROWS_AS(fill_placeholders("{model.depth}", config), tune::ConfigError);
  CHECK_THROWS_WITH_AS(fill_placeholders("{lr", config),
                       doctest::Contains("unclosed '{' in command argument '{lr'"),
                       tune::ConfigError);
  CHECK_THROWS_AS(fill_placeholders("{}", config), tune::ConfigError);
}

TEST_CASE("placeholder_keys lists every key in order") {
  CHECK(train::placeholder_keys({"python3", "{a}", "--b={b.c}{a}", "{{not}}"}) ==
        std::vector<std::string>{"a", "b.c", "a"});
  CHECK(train::placeholder_keys({"plain"}).empty());
  CHECK_THROWS_AS(train::placeholder_keys({"{open"}), tune::ConfigError);
}

TEST_CASE("parameter variables are upper-cased with other characters as underscores") {
  CHECK(train::detail::param_env_name("lr") == "TUNERUN_PARAM_LR");
  CHECK(train::detail::param_env_name("batch-size.2") == "TUNERUN_PARAM_BATCH_SIZE_2");
  CHECK(train::detail::format_value(Json("a b")) == "a b");
  CHECK(train::detail::format_value(Json(2.5)) == "2.5");
}

TEST_CASE("report lines: @tunerun and a JSON object, with an optional checkpoint") {
  CHECK_FALSE(parse_report_line("epoch 1 done", 1));
  CHECK_FALSE(parse_report_line(" @tunerun {\"loss\": 1}", 1));  // must start the line
  CHECK_FALSE(parse_report_line("@tunerunner says hi", 1));

  auto plain = parse_report_line(R"(@tunerun {"loss": 0.3, "acc": 0.9, "tag": "x"})", 1);
  REQUIRE(plain);
  CHECK(plain->metrics == Json{{"loss", 0.3}, {"acc", 0.9}, {"tag", "x"}});
  CHECK_FALSE(plain->checkpoint);

  auto with_checkpoint = parse_report_line(R"(@tunerun {"loss": 1, "checkpoint": "ck/e1"})", 2);
  REQUIRE(with_checkpoint);
  CHECK(with_checkpoint->metrics == Json{{"loss", 1}});
  CHECK(with_checkpoint->checkpoint == "ck/e1");

  auto tight = parse_report_line(R"(@tunerun{"loss": 2})", 3);
  REQUIRE(tight);
  CHECK(tight->metrics["loss"] == 2);
}

TEST_CASE("Python's NaN and Infinity parse as non-finite numbers, not inside strings") {
  auto line =
      parse_report_line(R"(@tunerun {"a": NaN, "b": -Infinity, "c": [Infinity], "d": "NaN"})", 1);
  REQUIRE(line);
  CHECK(std::isnan(line->metrics["a"].get<double>()));
  CHECK(line->metrics["b"].get<double>() == -INFINITY);
  CHECK(line->metrics["c"][0].get<double>() == INFINITY);
  CHECK(line->metrics["d"] == "NaN");
}

TEST_CASE("a malformed report line is a TrialError naming its line number and the parse error") {
  CHECK_THROWS_WITH_AS(parse_report_line("@tunerun {loss: 1}", 7),
                       doctest::Contains("stdout line 7: malformed report `@tunerun {loss: 1}`: "
                                         "[json.exception.parse_error"),
                       tune::TrialError);
  CHECK_THROWS_WITH_AS(parse_report_line("@tunerun [1, 2]", 3),
                       doctest::Contains("a report must be a JSON object"), tune::TrialError);
  CHECK_THROWS_WITH_AS(parse_report_line("@tunerun", 4),
                       doctest::Contains("stdout line 4: malformed report"), tune::TrialError);
  CHECK_THROWS_WITH_AS(parse_report_line(R"(@tunerun {"checkpoint": 3})", 5),
                       doctest::Contains("\"checkpoint\" must be a directory path"),
                       tune::TrialError);
}
