// NaN and ±infinity through the store: the column encoding on its own, then
// a store round trip, the SQL a user runs on such rows, and a version 1 file.
#include "storage/json_column.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "sql.h"
#include "storage/experiment_store.h"
#include "temp_dir.h"
#include "version3.h"

using tune::Json;
using tune::Mode;
using tune::storage::decode_json_column;
using tune::storage::encode_json_column;
using tune::storage::ExperimentStore;
using tune::storage::parse_json_column;
using tune::test::Sql;
using tune::test::TempDir;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// nlohmann's == is false for NaN == NaN; this compares NaN as equal.
bool same(const Json& a, const Json& b) {
  if (a.is_number_float() && b.is_number_float()) {
    const double x = a.get<double>(), y = b.get<double>();
    return (std::isnan(x) && std::isnan(y)) || x == y;
  }
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (const auto& [key, child] : a.items()) {
      if (!b.contains(key) || !same(child, b.at(key))) return false;
    }
    return true;
  }
  if (a.is_array()) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (!same(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

// Keys and strings that look like the encoding, to show it is not fooled.
Json tricky() {
  return Json{{"loss", kNan},           {"best", kInf},
              {"worst", -kInf},         {"reported_null", nullptr},
              {"a/b~c", {{"x", kNan}}}, {"list", {1.5, -kInf, "1e999", "-1e999"}},
              {"1e999", 1e308},         {"max", std::numeric_limits<double>::max()}};
}

}  // namespace

TEST_CASE("a value without NaN or infinity is written as plain JSON, no side column") {
  const Json value = {{"lr", 0.1}, {"layers", {1, 2}}, {"name", "x"}};
  auto column = encode_json_column(value);
  CHECK(column.text == value.dump());
  CHECK_FALSE(column.nonfinite);
  CHECK(decode_json_column(column.text, "") == value);
}

TEST_CASE("NaN and infinity round-trip through the JSON column and its side column") {
  auto column = encode_json_column(tricky());
  REQUIRE(column.nonfinite);
  CHECK(Json::parse(*column.nonfinite) == Json{{"/loss", "NaN"},
                                               {"/best", "Infinity"},
                                               {"/worst", "-Infinity"},
                                               {"/a~1b~0c/x", "NaN"},
                                               {"/list/1", "-Infinity"}});
  CHECK(column.text.find(R"("best":1e999)") != std::string::npos);
  CHECK(column.text.find(R"("worst":-1e999)") != std::string::npos);
  CHECK(column.text.find(R"("loss":null)") != std::string::npos);

  const Json back = decode_json_column(column.text, *column.nonfinite);
  CHECK(same(back, tricky()));
  CHECK(back["reported_null"].is_null());  // a null stays a null, not a NaN
  CHECK(back["list"][2] == "1e999");       // strings are left alone
  CHECK(back["max"] == std::numeric_limits<double>::max());
}

TEST_CASE("a reader without the side column gets null for NaN and infinity") {
  auto column = encode_json_column(tricky());
  const Json read = parse_json_column(column.text);
  REQUIRE_FALSE(read.is_discarded());
  CHECK(read["best"].is_null());
  CHECK(read["worst"].is_null());
  CHECK(read["loss"].is_null());
  CHECK(read["list"][3] == "-1e999");
  CHECK(parse_json_column("{not json").is_discarded());
}

TEST_CASE("a side column that names nothing in the value is an error, not a new member") {
  CHECK_THROWS_AS(decode_json_column(R"({"a":1})", R"({"/b":"NaN"})"), Json::exception);
  CHECK_THROWS_AS(decode_json_column(R"({"a":null})", R"({"/a":"nan"})"), Json::exception);
}

TEST_CASE("the store gives NaN and infinity back in metrics, configs, exploits and best_trial") {
  TempDir dir;
  {
    ExperimentStore store = ExperimentStore::open(dir.path());
    store.put_experiment({.name = "exp", .metric = "loss", .mode = Mode::kMax});
    for (int i = 0; i < 3; ++i) {
      tune::storage::TrialRecord t;
      t.trial_id = "exp_0000" + std::to_string(i);
      t.trial_index = i;
      t.config = i == 0 ? Json{{"clip", kInf}, {"decay", kNan}} : Json{{"clip", 1.0 * i}};
      store.put_trial(t);
    }
    store.append_result({.trial_id = "exp_00000", .training_iteration = 1, .metrics = tricky()});
    store.append_result(
        {.trial_id = "exp_00001", .training_iteration = 1, .metrics = {{"loss", kInf}}});
    store.append_result(
        {.trial_id = "exp_00002", .training_iteration = 1, .metrics = {{"loss", 0.5}}});
    store.add_exploit({.trial_id = "exp_00001",
                       .donor_id = "exp_00000",
                       .old_config = {{"clip", 1.0}},
                       .new_config = {{"clip", -kInf}}});
    store.flush();
  }
  ExperimentStore store = ExperimentStore::open_read_only(dir.path());
  auto trials = store.trials();
  REQUIRE(trials.size() == 3);
  CHECK(same(trials[0].config, Json{{"clip", kInf}, {"decay", kNan}}));
  CHECK(same(store.results("exp_00000").at(0).metrics, tricky()));
  CHECK(store.results("exp_00001").at(0).metrics["loss"] == kInf);
  CHECK(store.exploits().at(0).new_config["clip"] == -kInf);
  // An infinite metric is not a best value (as NaN is not): the finite 0.5 wins under max.
  auto best = store.best_trial();
  REQUIRE(best);
  CHECK(best->trial.trial_id == "exp_00002");

  SUBCASE("plain SQL reads every row, infinity as Inf and NaN as NULL") {
    Sql sql(store.path());
    CHECK(sql.scalar("SELECT count(*) FROM results WHERE json_valid(metrics)") == "3");
    CHECK(sql.rows("SELECT trial_id, json_extract(metrics, '$.loss'), metric_value "
                   "FROM all_results ORDER BY trial_id") ==
          std::vector<std::vector<std::string>>{{"exp_00000", "NULL", "NULL"},
                                                {"exp_00001", "Inf", "NULL"},
                                                {"exp_00002", "0.5", "0.5"}});
    CHECK(sql.scalar("SELECT json_extract(metrics, '$.worst') < 0 FROM results "
                     "WHERE trial_id = 'exp_00000'") == "1");
    CHECK(sql.scalar("SELECT json_extract(metrics_nonfinite, '$.\"/loss\"') FROM results "
                     "WHERE trial_id = 'exp_00000'") == "NaN");
    CHECK(sql.scalar("SELECT count(*) FROM results WHERE metrics_nonfinite IS NULL") == "1");
    CHECK(sql.scalar("SELECT trial_id FROM best_trial") == "exp_00002");
  }
}

TEST_CASE("a version 1 file is read as it is read-only, and upgraded when opened for writing") {
  TempDir dir;
  {
    // What version 1 wrote: no side columns, NaN and infinity as null.
    ExperimentStore store = ExperimentStore::open(dir.path());
    store.put_experiment({.name = "exp", .metric = "loss", .mode = Mode::kMin});
    store.put_trial({.trial_id = "exp_00000", .config = {{"lr", 0.1}}});
    store.append_result(
        {.trial_id = "exp_00000", .training_iteration = 1, .metrics = {{"loss", 0.25}}});
    store.flush();
  }
  {
    Sql sql(dir.path() / "experiment.db", SQLITE_OPEN_READWRITE);
    tune::test::make_version_3(sql);
    sql.exec(R"(
        DROP VIEW pareto_front; DROP VIEW objective_values; DROP TABLE objectives;
        DROP VIEW best_result; DROP VIEW best_trial; DROP VIEW last_results; DROP VIEW all_results;
        ALTER TABLE trials DROP COLUMN config_nonfinite;
        ALTER TABLE results DROP COLUMN metrics_nonfinite;
        ALTER TABLE exploits DROP COLUMN old_config_nonfinite;
        ALTER TABLE exploits DROP COLUMN new_config_nonfinite;
        CREATE VIEW all_results AS SELECT r.*, json_extract(r.metrics, '$.loss') AS metric_value,
          t.trial_index FROM results AS r JOIN trials AS t USING (trial_id);
        CREATE VIEW last_results AS SELECT * FROM all_results;
        CREATE VIEW best_trial AS SELECT l.*, t.config FROM last_results AS l
          JOIN trials AS t USING (trial_id) LIMIT 1;
        UPDATE schema_info SET value = '1'; PRAGMA user_version = 1;)");
  }
  {
    ExperimentStore old = ExperimentStore::open_read_only(dir.path());
    CHECK(old.trials().at(0).config == Json{{"lr", 0.1}});
    CHECK(old.results("exp_00000").at(0).metrics == Json{{"loss", 0.25}});
    CHECK(old.best_trial()->trial.trial_id == "exp_00000");
    Sql sql(dir.path() / "experiment.db");
    CHECK(sql.scalar("PRAGMA user_version") == "1");  // a reader changes nothing
  }
  ExperimentStore store = ExperimentStore::open(dir.path());
  store.append_result(
      {.trial_id = "exp_00000", .training_iteration = 2, .metrics = {{"loss", kNan}}});
  store.flush();
  CHECK(store.results("exp_00000").at(0).metrics == Json{{"loss", 0.25}});
  CHECK(std::isnan(store.results("exp_00000").at(1).metrics["loss"].get<double>()));
  Sql sql(dir.path() / "experiment.db");
  CHECK(sql.scalar("PRAGMA user_version") == "6");
  CHECK(sql.scalar("SELECT value FROM schema_info WHERE key = 'schema_version'") == "6");
  // The recreated views: the NaN result has no metric_value.
  CHECK(sql.scalar("SELECT count(*) FROM all_results WHERE metric_value IS NULL") == "1");
}
