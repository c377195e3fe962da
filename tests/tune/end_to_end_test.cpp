// `tunerun` as a user runs it: a sweep file in, an experiment directory and a
// SQLite database out, queried with plain SQL.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include "core/config.h"
#include "sqlite_query.h"
#include "test_util.h"

using tune::Json;
using tune::test::query;
using tune::test::run_tunerun;
using tune::test::ScratchDir;

namespace {

std::string quick_start_sweep() {
  std::ifstream in(std::string(TUNERUN_SOURCE_DIR) + "/examples/quadratic.toml");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("the quick-start sweep runs every trial and the best_trial view finds the optimum") {
  ScratchDir dir;
  dir.write("quadratic.toml", quick_start_sweep());
  auto run = run_tunerun("quadratic.toml", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(run.output.find("25 trials (25 TERMINATED, 0 ERROR)") != std::string::npos);

  const auto db = dir.path() / "runs/quadratic/experiment.db";
  auto trials = query(db, "SELECT trial_id, status, config FROM trials ORDER BY trial_index");
  REQUIRE(trials.size() == 25);
  std::set<std::string> configs;
  for (const auto& row : trials) {
    CHECK(row[1] == "TERMINATED");
    configs.insert(row[2]);
  }
  CHECK(configs.size() == 25);  // every grid cell once
  auto results = query(db, "SELECT trial_id, training_iteration, metrics FROM results");
  CHECK(results.size() == 25);

  auto best = query(db, "SELECT config, metric_value FROM best_trial");
  REQUIRE(best.size() == 1);
  Json config = Json::parse(best[0][0]);
  CHECK(config["x"] == 3);
  CHECK(config["y"] == -1);
  CHECK(std::stod(best[0][1]) == 0.0);

  auto best_cmd = run_tunerun("best runs/quadratic --json", dir.path());
  REQUIRE(best_cmd.exit_code == 0);
  CHECK(Json::parse(best_cmd.output)["config"] == config);

  auto status = run_tunerun("status runs/quadratic", dir.path());
  CHECK(status.exit_code == 0);
  CHECK(status.output.find("25 TERMINATED") != std::string::npos);
}

TEST_CASE("the same seed gives the same configs, `run` is the default subcommand") {
  ScratchDir dir;
  dir.write("s.toml", R"(
name = "seeded"
seed = 5
num_samples = 4
[trainable]
builtin = "branin"
[param_space]
x1 = { uniform = [-5, 10] }
x2 = { uniform = [0, 15] }
)");
  REQUIRE(run_tunerun("-q s.toml", dir.path()).exit_code == 0);
  // An existing experiment is never overwritten.
  auto again = run_tunerun("run -q s.toml", dir.path());
  CHECK(again.exit_code == 2);
  CHECK(again.output.find("already exists") != std::string::npos);
  REQUIRE(run_tunerun("run -q s.toml --name seeded_again", dir.path()).exit_code == 0);
  auto a = query(dir.path() / "runs/seeded/experiment.db",
                 "SELECT config FROM trials ORDER BY trial_index");
  auto b = query(dir.path() / "runs/seeded_again/experiment.db",
                 "SELECT config FROM trials ORDER BY trial_index");
  CHECK(a.size() == 4);
  CHECK(a == b);
}

TEST_CASE("each trial stores its suggestion time; status --verbose shows it and the model fit") {
  ScratchDir dir;
  dir.write("timed.toml", R"(
name = "timed"
metric = "loss"
num_samples = 5
max_concurrent_trials = 1
[trainable]
builtin = "branin"
[param_space]
x1 = { uniform = [-5, 10] }
x2 = { uniform = [0, 15] }
[search]
algorithm = "tpe"
n_startup_trials = 3
)");
  REQUIRE(run_tunerun("-q timed.toml", dir.path()).exit_code == 0);
  // The start-up trials are random: a suggest time, no model fitted. The
  // controller suggests one trial ahead of the running one, so the 4th may
  // come before 3 have completed; the 5th comes from the model.
  auto rows =
      query(dir.path() / "runs/timed/experiment.db",
            "SELECT suggest_s IS NOT NULL, model_fit_s IS NOT NULL, model_fit_s <= suggest_s"
            " FROM trials ORDER BY trial_index");
  REQUIRE(rows.size() == 5);
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    CHECK(rows[i][0] == "1");
    if (i < 3) CHECK(rows[i][1] == "0");
    if (i == 4) CHECK(rows[i][1] == "1");
    if (rows[i][1] == "1") CHECK(rows[i][2] == "1");
  }
  auto plain = run_tunerun("status runs/timed", dir.path());
  CHECK(plain.output.find("suggest ms") == std::string::npos);
  auto verbose = run_tunerun("status --verbose runs/timed", dir.path());
  CHECK(verbose.exit_code == 0);
  CHECK(verbose.output.find("suggest ms") != std::string::npos);
  CHECK(verbose.output.find("fit ms") != std::string::npos);
}

TEST_CASE("a bad sweep file exits 2 with file, line and key, and writes nothing") {
  ScratchDir dir;
  dir.write("typo.toml", "name = \"typo\"\n[trainable]\nbuiltin = \"quadratic\"\nnum_worker = 2\n");
  auto typo = run_tunerun("typo.toml", dir.path());
  CHECK(typo.exit_code == 2);
  CHECK(typo.output.find("typo.toml:4: key 'trainable.num_worker': unknown key") !=
        std::string::npos);

  dir.write("broken.toml", "name = \"broken\"\n[param_space\n");
  auto broken = run_tunerun("broken.toml", dir.path());
  CHECK(broken.exit_code == 2);
  CHECK(broken.output.find("broken.toml:2:") != std::string::npos);

  CHECK(run_tunerun("missing.toml", dir.path()).exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "runs"));

  auto validate = run_tunerun("validate typo.toml", dir.path());
  CHECK(validate.exit_code == 2);
}

TEST_CASE("a sweep with failing trials exits 1 and status says why") {
  ScratchDir dir;
  dir.write("fails.toml", R"(
metric = "loss"
[trainable]
builtin = "learning_curve"
[param_space]
iterations = 3
fail_at = { grid_search = [0, 2] }
)");
  auto run = run_tunerun("fails.toml", dir.path());
  CHECK(run.exit_code == 1);
  auto status = run_tunerun("status runs/fails", dir.path());
  CHECK(status.output.find("injected failure at iteration 2") != std::string::npos);
  CHECK(status.output.find("1 ERROR") != std::string::npos);
}

TEST_CASE("--version, --help and unknown experiments") {
  ScratchDir dir;
  auto version = run_tunerun("--version", dir.path());
  CHECK(version.exit_code == 0);
  CHECK(version.output.find("tunerun 0.1.0") != std::string::npos);
  auto help = run_tunerun("--help", dir.path());
  CHECK(help.exit_code == 0);
  CHECK(help.output.find("status") != std::string::npos);
  CHECK(help.output.find("Usage: tunerun [OPTIONS]") != std::string::npos);  // the program named
  CHECK(run_tunerun("best nowhere", dir.path()).exit_code == 2);
  std::filesystem::create_directories(dir.path() / "empty");
  auto empty = run_tunerun("status empty", dir.path());
  CHECK(empty.exit_code == 2);
  CHECK(empty.output.find("no experiment database") != std::string::npos);
}

TEST_CASE("a trainable from a user's shared library runs on every rank") {
  ScratchDir dir;
  dir.write("plugin.toml", std::string(R"(
metric = "loss"
[trainable]
name = "plugin_square"
library = ")") + TUNERUN_TEST_PLUGIN +
                               R"("
num_workers = 2
[param_space]
x = { grid_search = [-2, 1, 3] }
)");
  auto run = run_tunerun("plugin.toml", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  auto best = query(dir.path() / "runs/plugin/experiment.db",
                    "SELECT json_extract(config, '$.x'), metric_value FROM best_trial");
  REQUIRE(best.size() == 1);
  CHECK(best[0][0] == "1");
  CHECK(std::stod(best[0][1]) == 1.0);

  dir.write("missing.toml", "[trainable]\nname = \"x\"\nlibrary = \"nope.so\"\n");
  auto missing = run_tunerun("missing.toml", dir.path());
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find("key 'trainable.library': no library at") != std::string::npos);

  dir.write("unknown.toml", std::string("[trainable]\nname = \"cube\"\nlibrary = \"") +
                                TUNERUN_TEST_PLUGIN + "\"\n");
  auto unknown = run_tunerun("unknown.toml", dir.path());
  CHECK(unknown.exit_code == 1);  // the trial fails; the worker names what the library has
  auto status = run_tunerun("status runs/unknown", dir.path());
  CHECK(status.output.find("no trainable named 'cube'") != std::string::npos);
}

TEST_CASE("the CLI's ranks run tunerun-worker, which refuses to run by hand") {
  ScratchDir dir;
  // Each rank's command writes down which executable started it.
  dir.write("exe.toml", R"(
metric = "v"
[trainable]
command = ["sh", "-c", "readlink /proc/$PPID/exe > exe_$RANK; echo '@tunerun {{\"v\": 1}}'"]
num_workers = 2
[param_space]
x = 1
)");
  auto run = run_tunerun("-v exe.toml", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto worker = std::filesystem::path(TUNERUN_BINARY).parent_path() / "tunerun-worker";
  CHECK(run.output.find("ranks run " + worker.string()) != std::string::npos);
  for (const char* rank : {"exe_0", "exe_1"}) {
    std::ifstream in(dir.path() / rank);
    std::string exe;
    std::getline(in, exe);
    CHECK(exe == worker.string());
  }

  auto by_hand = tune::test::run_shell("'" + worker.string() + "'");
  CHECK(by_hand.exit_code == 2);
  CHECK(by_hand.output.find("tunerun controller, which starts it") != std::string::npos);
}

TEST_CASE("HyperBand over a trainable without checkpoints: paused trials restart, none fails") {
  ScratchDir dir;
  // max_t = 9, eta = 3: bracket s=0 takes the first 3 trials to 9; bracket
  // s=1 pauses its 5 at milestone 3 and resumes the best 2. With
  // reuse_workers and one trial at a time, the next trial takes a paused
  // one's waiting ranks: a resumed winner restarts from iteration 1.
  dir.write("hb.toml", R"(
name = "hb"
metric = "accuracy"
mode = "max"
max_concurrent_trials = 1
reuse_workers = true
[trainable]
builtin = "learning_curve"
[param_space]
iterations = 20
speed = 0.3
ceiling = { grid_search = [0.5, 0.6, 0.7, 0.55, 0.9, 0.65, 0.95, 0.75] }
[scheduler]
type = "hyperband"
max_t = 9
reduction_factor = 3
)");
  auto run = run_tunerun("-q hb.toml", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto db = dir.path() / "runs/hb/experiment.db";
  for (const auto& row : query(db, "SELECT trial_id, status, error FROM trials")) {
    INFO(row[0], ": ", row[2]);
    CHECK(row[1] == "TERMINATED");
  }
  // Every iteration recorded once: 3 * 9 (s=0), 2 * 9 (winners), 3 * 3 (losers).
  CHECK(query(db, "SELECT trial_id, training_iteration FROM results").size() == 54);
  CHECK(query(db,
              "SELECT trial_id FROM results GROUP BY trial_id, training_iteration "
              "HAVING COUNT(*) > 1")
            .empty());
  auto last = query(db,
                    "SELECT json_extract(config, '$.ceiling'), MAX(training_iteration), "
                    "COUNT(*) FROM results JOIN trials USING (trial_id) GROUP BY trial_id");
  for (const auto& row : last) {
    INFO("ceiling ", row[0]);
    const bool short_run = row[0] == "0.55" || row[0] == "0.65" || row[0] == "0.75";
    CHECK(row[1] == (short_run ? "3" : "9"));
    CHECK(row[2] == row[1]);
  }
  CHECK_FALSE(query(db,
                    "SELECT reason FROM trial_events WHERE reason LIKE "
                    "'%without a checkpoint: restarts from scratch%'")
                  .empty());
}
