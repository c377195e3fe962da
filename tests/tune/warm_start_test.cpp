// Warm starts from a sweep file: a second experiment names the first in
// warm_start, learns from its trials and runs its best configs first; a
// parameter added since is drawn at random for the earlier trials, and the
// log says so.
#include "tune/spec/warm_start.h"

#include <doctest/doctest.h>

#include "sqlite_query.h"
#include "test_util.h"

using tune::Json;
using tune::test::query;
using tune::test::run_tunerun;
using tune::test::ScratchDir;

namespace {

// A sweep of a command reporting loss = (x - 0.3)^2 + y.
std::string warm_sweep(const std::string& name, const std::string& extra) {
  return R"(
name = ")" +
         name + R"("
metric = "loss"
num_samples = 14
seed = 5
)" + extra +
         R"(
[trainable]
command = ["sh", "-c", '''awk -v x="$1" -v y="$2" 'BEGIN {{ printf "@tunerun {{\"loss\": %.6f}}\n", (x - 0.3) ^ 2 + y }}' ''', "sh", "{x}", "{y}"]
[param_space]
x = { uniform = [0, 1] }
y = { uniform = [0, 1] }
[search]
algorithm = "tpe"
)";
}

}  // namespace

TEST_CASE("a second sweep warm-started from the first runs the first's best configs first") {
  ScratchDir dir;
  dir.write("first.toml", warm_sweep("first", ""));
  auto first = run_tunerun("-q first.toml", dir.path());
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  dir.write("second.toml", warm_sweep("second", "warm_start = [\"runs/first\"]"));
  auto second = run_tunerun("second.toml", dir.path());
  INFO(second.output);
  REQUIRE(second.exit_code == 0);
  CHECK(second.output.find("warm start: 14 trials from runs/first") != std::string::npos);
  CHECK(second.output.find("the searcher learns from 14 of the 14 trials") != std::string::npos);
  const auto best = query(dir.path() / "runs/first/experiment.db",
                          "SELECT config FROM last_results ORDER BY metric_value LIMIT 3");
  const auto again = query(dir.path() / "runs/second/experiment.db",
                           "SELECT config FROM trials ORDER BY trial_index LIMIT 3");
  REQUIRE(best.size() == 3);
  REQUIRE(again.size() == 3);
  for (int i = 0; i < 3; ++i) CHECK(Json::parse(again[i][0]) == Json::parse(best[i][0]));
}

TEST_CASE("earlier trials lacking a parameter get it drawn at random, and the notes say so") {
  ScratchDir dir;
  dir.write("first.toml", warm_sweep("first", ""));
  REQUIRE(run_tunerun("-q first.toml", dir.path()).exit_code == 0);
  const tune::ParamSpace space{{"x", tune::uniform(0, 1)}, {"z", tune::choice({1, 2})}};
  const auto warm = tune::load_warm_start({dir.path() / "runs/first"}, space, 3);
  REQUIRE(warm.trials.size() == 14);
  for (const auto& t : warm.trials) {
    CHECK(t.config["x"].is_number());
    CHECK((t.config["z"] == 1 || t.config["z"] == 2));
    CHECK(t.result.contains("loss"));
  }
  REQUIRE(warm.notes.size() == 1);
  CHECK(warm.notes[0].find("new since, drawn at random for them: z") != std::string::npos);
  CHECK(warm.notes[0].find("no longer searched: y") != std::string::npos);
  CHECK_THROWS_AS(tune::load_warm_start({dir.path() / "runs/none"}, space, 3), tune::ConfigError);
}
