// `tunerun results`: each output format parsed back and checked against the
// database it reads.
#include <doctest/doctest.h>

#include <set>
#include <sstream>

#include "core/config.h"
#include "sqlite_query.h"
#include "test_util.h"

using tune::Json;
using tune::test::query;
using tune::test::run_tunerun;
using tune::test::ScratchDir;

namespace {

using CsvRows = std::vector<std::vector<std::string>>;

// An RFC 4180 reader: quoted fields may hold commas, quotes ("") and newlines.
CsvRows parse_csv(const std::string& text) {
  CsvRows rows(1);
  std::string field;
  bool quoted = false, field_started = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = field_started = true;
    } else if (c == ',') {
      rows.back().push_back(std::exchange(field, {}));
    } else if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      rows.back().push_back(std::exchange(field, {}));
      rows.emplace_back();
    } else {
      field += c;
      field_started = true;
    }
  }
  if (rows.back().empty() && field.empty()) rows.pop_back();
  (void)field_started;
  return rows;
}

// A finished 2-trial x 3-iteration experiment in `dir`/runs/curves.
void run_curves(const ScratchDir& dir) {
  dir.write("curves.toml", R"(
name = "curves"
metric = "loss"
[trainable]
builtin = "learning_curve"
[param_space]
iterations = 3
speed = { grid_search = [0.1, 0.5] }
note = 'a, "quoted"'
[param_space.model]
width = 8
)");
  auto run = run_tunerun("-q curves.toml", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
}

}  // namespace

TEST_CASE("results as CSV and JSON parse back to the database's rows") {
  ScratchDir dir;
  run_curves(dir);
  const auto db = dir.path() / "runs/curves/experiment.db";
  auto expected = query(db,
                        "SELECT trial_id, training_iteration, json_extract(metrics, '$.loss') "
                        "FROM all_results ORDER BY trial_index, training_iteration");
  REQUIRE(expected.size() == 6);

  auto csv = run_tunerun("results runs/curves --format csv", dir.path());
  REQUIRE(csv.exit_code == 0);
  const CsvRows rows = parse_csv(csv.output);
  REQUIRE(rows.size() == 7);
  const std::vector<std::string> header = {"trial_id",
                                           "training_iteration",
                                           "timestamp",
                                           "time_this_iter_s",
                                           "time_total_s",
                                           "config.iterations",
                                           "config.model.width",
                                           "config.note",
                                           "config.speed",
                                           "accuracy",
                                           "loss"};
  CHECK(rows[0] == header);
  for (size_t i = 1; i < rows.size(); ++i) {
    INFO("row ", i);
    REQUIRE(rows[i].size() == header.size());
    CHECK(rows[i][0] == expected[i - 1][0]);
    CHECK(rows[i][1] == expected[i - 1][1]);
    CHECK(rows[i][7] == "a, \"quoted\"");
    CHECK(rows[i][6] == "8");
    CHECK(std::stod(rows[i][10]) == doctest::Approx(std::stod(expected[i - 1][2])));
    CHECK(std::stod(rows[i][4]) >= 0);
  }

  auto json = run_tunerun("results runs/curves --format json", dir.path());
  REQUIRE(json.exit_code == 0);
  const Json array = Json::parse(json.output);
  REQUIRE(array.is_array());
  REQUIRE(array.size() == 6);
  for (size_t i = 0; i < array.size(); ++i) {
    const Json& row = array[i];
    CHECK(row["trial_id"] == expected[i][0]);
    CHECK(row["training_iteration"] == std::stoi(expected[i][1]));
    CHECK(row["loss"].get<double>() == doctest::Approx(std::stod(expected[i][2])));
    CHECK(row["config.note"] == "a, \"quoted\"");
    CHECK(row["config.model.width"] == 8);
    CHECK(row.contains("accuracy"));
    CHECK(row["timestamp"].get<double>() > 1e9);
  }
}

TEST_CASE("results filters: --last, --trial and --metric") {
  ScratchDir dir;
  run_curves(dir);
  auto last = run_tunerun("results runs/curves --format json --last", dir.path());
  REQUIRE(last.exit_code == 0);
  const Json last_rows = Json::parse(last.output);
  REQUIRE(last_rows.size() == 2);
  CHECK(last_rows[0]["training_iteration"] == 3);
  CHECK(last_rows[1]["training_iteration"] == 3);
  CHECK(last_rows[0]["trial_id"] != last_rows[1]["trial_id"]);

  const std::string first = last_rows[0]["trial_id"];
  const std::string second = last_rows[1]["trial_id"];
  auto one = run_tunerun("results runs/curves --format json --trial " + first, dir.path());
  REQUIRE(one.exit_code == 0);
  const Json one_rows = Json::parse(one.output);
  REQUIRE(one_rows.size() == 3);
  for (const auto& row : one_rows) CHECK(row["trial_id"] == first);
  auto both = run_tunerun(
      "results --trial " + first + " --trial " + second + " runs/curves --format json", dir.path());
  REQUIRE(both.exit_code == 0);
  CHECK(Json::parse(both.output).size() == 6);

  auto metric = run_tunerun("results runs/curves --format csv --metric loss --last", dir.path());
  REQUIRE(metric.exit_code == 0);
  const CsvRows rows = parse_csv(metric.output);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].back() == "loss");
  CHECK(std::find(rows[0].begin(), rows[0].end(), "accuracy") == rows[0].end());

  auto unknown = run_tunerun("results runs/curves --trial nope", dir.path());
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.output.find("no trial 'nope'") != std::string::npos);
  CHECK(run_tunerun("results runs/curves --format xml", dir.path()).exit_code == 2);
  CHECK(run_tunerun("results runs/nowhere", dir.path()).exit_code == 2);
}

TEST_CASE("the results table has a header and one aligned line per result") {
  ScratchDir dir;
  run_curves(dir);
  auto table = run_tunerun("results runs/curves --last", dir.path());
  REQUIRE(table.exit_code == 0);
  std::istringstream lines(table.output);
  std::vector<std::string> all;
  for (std::string line; std::getline(lines, line);) all.push_back(line);
  REQUIRE(all.size() == 3);
  CHECK(all[0].starts_with("trial_id"));
  CHECK(all[0].find("config.speed") != std::string::npos);
  CHECK(all[1].starts_with("curves_00000"));
  CHECK(all[2].starts_with("curves_00001"));
  // Columns line up: "loss" starts where each row's loss value starts.
  const size_t loss_at = all[0].rfind("loss");
  CHECK(all[1].size() > loss_at);
  CHECK(all[1][loss_at - 1] == ' ');
  CHECK(all[1][loss_at] != ' ');
}
