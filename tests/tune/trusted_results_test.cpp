// What a new user runs into when a sweep goes wrong, through the `tunerun`
// CLI as they would meet it: a failed trial is never the best, a
// misconfigured sweep says so, lost checkpoints are said aloud, and each
// ending has the exit code docs/cli.md gives it.
#include <doctest/doctest.h>
#include <sys/mount.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "sqlite_query.h"
#include "test_util.h"
#include "tune/result_grid.h"

using tune::test::eventually;
using tune::test::query;
using tune::test::run_shell;
using tune::test::run_tunerun;
using tune::test::ScratchDir;

namespace {

// The number of times `needle` occurs in `text`.
size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::string scalar(const std::filesystem::path& db, const std::string& sql) {
  const auto rows = query(db, sql);
  return rows.empty() || rows[0].empty() ? "" : rows[0][0];
}

// Trial 0 fails at iteration 2 after reporting loss 0.65 at iteration 1;
// trial 1 ends at iteration 3 with loss 0.30. Under mode "max" the failed
// trial's last value is the higher.
constexpr const char* kFailedIsHigher = R"(
name = "best"
metric = "loss"
mode = "max"
[trainable]
builtin = "learning_curve"
[param_space]
iterations = 3
speed = 0.5
fail_at = { grid_search = [2, 0] }
)";

}  // namespace

TEST_CASE("a failed trial is never the best: the summary, `best`, best_trial and ResultGrid") {
  ScratchDir dir;
  dir.write("best.toml", kFailedIsHigher);
  const auto run = run_tunerun("best.toml", dir.path());
  INFO(run.output);
  CHECK(run.exit_code == 1);  // a trial failed
  CHECK(run.output.find("Best trial best_00001") != std::string::npos);

  const auto best = run_tunerun("best runs/best --json", dir.path());
  INFO(best.output);
  CHECK(best.exit_code == 0);
  CHECK(best.output.find("\"trial_id\": \"best_00001\"") != std::string::npos);

  const auto db = dir.path() / "runs/best/experiment.db";
  REQUIRE(scalar(db, "SELECT status FROM trials WHERE trial_id = 'best_00000'") == "ERROR");
  CHECK(scalar(db, "SELECT trial_id FROM best_trial") == "best_00001");
  CHECK(scalar(db, "SELECT trial_id FROM best_result") == "best_00001");

  const auto grid = tune::ResultGrid::from_experiment(dir.path() / "runs/best");
  CHECK(grid.get_best_result().trial_id == "best_00001");
}

TEST_CASE("a result without the metric ends its trial in ERROR at once, naming what it reported") {
  ScratchDir dir;
  dir.write("typo.toml", R"(
name = "typo"
metric = "accuracyy"
[failure]
max_failures = 3
[trainable]
builtin = "learning_curve"
[param_space]
iterations = 3
)");
  const auto run = run_tunerun("-q typo.toml", dir.path());
  INFO(run.output);
  CHECK(run.exit_code == 1);
  const auto db = dir.path() / "runs/typo/experiment.db";
  const std::string error = scalar(db, "SELECT error FROM trials");
  CHECK(error.find("did not include the metric(s) `accuracyy`") != std::string::npos);
  CHECK(error.find("TUNE_DISABLE_STRICT_METRIC_CHECKING") != std::string::npos);
  CHECK(error.find("\"accuracy\":") != std::string::npos);  // what it reported
  // Not retried: the same keys would come again.
  CHECK(scalar(db, "SELECT count(*) FROM trial_events WHERE to_status = 'RUNNING'") == "1");

  SUBCASE("Ray's switch turns the check off") {
    const auto off = run_shell("cd '" + dir.path().string() +
                               "' && TUNE_DISABLE_STRICT_METRIC_CHECKING=1 '" TUNERUN_BINARY
                               "' -q typo.toml --name unchecked");
    INFO(off.output);
    CHECK(off.exit_code == 0);
  }
}

TEST_CASE("a stop criterion on a key no result has is an error at the first result") {
  ScratchDir dir;
  dir.write("stop.toml", R"(
name = "stop"
metric = "loss"
[stop]
trainig_iteration = 3
[trainable]
builtin = "learning_curve"
[param_space]
iterations = 50
)");
  const auto run = run_tunerun("-q stop.toml", dir.path());
  INFO(run.output);
  CHECK(run.exit_code == 1);
  const auto db = dir.path() / "runs/stop/experiment.db";
  const std::string error = scalar(db, "SELECT error FROM trials");
  CHECK(error.find("(iteration 1)") != std::string::npos);
  CHECK(error.find("`trainig_iteration` that the stop criteria name") != std::string::npos);
  CHECK(error.find("training_iteration") != std::string::npos);  // the keys it has
}

TEST_CASE("validate refuses a storage_path that is a file or cannot be written") {
  ScratchDir dir;
  dir.write("taken", "a file");
  dir.write("q.toml", R"(
storage_path = "taken"
[trainable]
builtin = "quadratic"
)");
  for (const std::string command : {"validate q.toml", "-q q.toml"}) {
    const auto run = run_tunerun(command, dir.path());
    INFO(command << ": " << run.output);
    CHECK(run.exit_code == 2);
    CHECK(run.output.find("key 'storage_path': taken is a file, not a folder") !=
          std::string::npos);
  }
  const auto ro = dir.path() / "ro";
  std::filesystem::create_directories(ro);
  if (mount("tmpfs", ro.c_str(), "tmpfs", MS_RDONLY, "size=64k") != 0) {
    MESSAGE("skipped the read-only case: cannot mount a tmpfs here");
    return;
  }
  dir.write("ro.toml", R"(
storage_path = "ro/runs"
[trainable]
builtin = "quadratic"
)");
  const auto run = run_tunerun("validate ro.toml", dir.path());
  umount(ro.c_str());
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("ro is not writable") != std::string::npos);
}

TEST_CASE("a full disk ends the run with exit 2 and the command that resumes it") {
  ScratchDir dir;
  const auto disk = dir.path() / "disk";
  std::filesystem::create_directories(disk);
  if (mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=512k") != 0) {
    MESSAGE("skipped: cannot mount a tmpfs here");
    return;
  }
  dir.write("full.toml", R"(
name = "full"
storage_path = "disk"
metric = "value"
[trainable]
builtin = "noop"
[param_space]
iterations = 20000
)");
  const auto run = run_tunerun("-q full.toml", dir.path());
  umount2(disk.c_str(), MNT_DETACH);
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("is full") != std::string::npos);
  CHECK(run.output.find("tunerun resume disk/full") != std::string::npos);
}

TEST_CASE("a corrupt experiment.db is exit 2 from every reader, said once with its path") {
  ScratchDir dir;
  std::filesystem::create_directories(dir.path() / "runs/x");
  dir.write("runs/x/experiment.db", std::string(8192, 'x'));
  for (const std::string command :
       {"status runs/x", "best runs/x", "results runs/x", "resume runs/x"}) {
    const auto run = run_tunerun(command, dir.path());
    INFO(command << ": " << run.output);
    CHECK(run.exit_code == 2);
    CHECK(count_of(run.output,
                   "runs/x/experiment.db is not a readable tunerun database "
                   "(SQLite: file is not a database)") == 1);
  }
}

TEST_CASE("the command line: option values, --workers and --metric") {
  ScratchDir dir;
  dir.write("q.toml", R"(
metric = "loss"
[trainable]
builtin = "quadratic"
)");
  SUBCASE("an option's value may be a subcommand's name") {
    const auto run = run_tunerun("-q q.toml --name status", dir.path());
    INFO(run.output);
    CHECK(run.exit_code == 0);
    CHECK(std::filesystem::exists(dir.path() / "runs/status/experiment.db"));
  }
  SUBCASE("simulate --workers 0 names the bound") {
    const auto run = run_tunerun("simulate q.toml --workers 0", dir.path());
    INFO(run.output);
    CHECK(run.exit_code == 2);
    CHECK(run.output.find("from 1 to 100000, got 0") != std::string::npos);
    CHECK(run.output.size() < 300);
  }
  SUBCASE("results --metric refuses a metric no result has, listing those there are") {
    REQUIRE(run_tunerun("-q q.toml", dir.path()).exit_code == 0);
    const auto run = run_tunerun("results runs/q --metric nope", dir.path());
    INFO(run.output);
    CHECK(run.exit_code == 2);
    CHECK(run.output.find("no result in runs/q has the metric 'nope'; its metrics are: loss") !=
          std::string::npos);
  }
}

TEST_CASE("a checkpoint deleted before a resume: a warning, an event, the newest one left") {
  ScratchDir dir;
  dir.write("lost.toml", R"(
name = "lost"
metric = "loss"
[trainable]
builtin = "learning_curve"
[param_space]
iterations = 5
checkpoint_every = 1
fail_at = 4
)");
  REQUIRE(run_tunerun("-q lost.toml", dir.path()).exit_code == 1);
  const auto trial = dir.path() / "runs/lost/trials/lost_00000";
  REQUIRE(std::filesystem::is_directory(trial / "checkpoint_000003"));
  std::filesystem::remove_all(trial / "checkpoint_000003");

  const auto run = run_tunerun("resume runs/lost --resume-errored", dir.path());
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("warning: checkpoint 3 of trial lost_00000 is missing") !=
        std::string::npos);
  CHECK(run.output.find("it resumes from checkpoint 2") != std::string::npos);
  const auto db = dir.path() / "runs/lost/experiment.db";
  CHECK(scalar(db,
               "SELECT count(*) FROM trial_events WHERE reason LIKE "
               "'checkpoint 3 of trial lost_00000 is missing%'") == "1");
  CHECK(scalar(db, "SELECT status FROM trials") == "TERMINATED");
}

TEST_CASE("max_failures = -1 backs off, and a checkpoint deleted meanwhile is skipped uncharged") {
  ScratchDir dir;
  dir.write("retry.toml", R"(
name = "retry"
metric = "loss"
[failure]
max_failures = -1
[trainable]
builtin = "learning_curve"
[param_space]
iterations = 5
checkpoint_every = 1
fail_at = 4
)");
  tune::test::CommandResult run;
  std::thread runner([&] { run = run_tunerun("-q retry.toml", dir.path()); });
  const auto db = dir.path() / "runs/retry/experiment.db";
  // Between the failure and the restart, a second later, checkpoint 3 goes.
  const bool failed = eventually(
      [&] {
        return std::filesystem::exists(db) &&
               scalar(db, "SELECT count(*) FROM sqlite_master WHERE name = 'trials'") == "1" &&
               scalar(db,
                      "SELECT count(*) FROM trials WHERE status_reason LIKE "
                      "'restarting after failure 1 (from checkpoint 3) in 1 s%'") == "1";
      },
      30);
  if (failed) {
    std::filesystem::remove_all(dir.path() / "runs/retry/trials/retry_00000/checkpoint_000003");
  }
  runner.join();
  INFO(run.output);
  REQUIRE(failed);
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("warning: checkpoint 3 of trial retry_00000 is missing") !=
        std::string::npos);
  CHECK(scalar(db, "SELECT num_failures FROM trials") == "1");
  // The restart came a second after the failure, not at once.
  const double waited = std::stod(scalar(db, R"(
      SELECT r.at - f.at FROM trial_events AS f JOIN trial_events AS r
      ON r.id > f.id AND r.to_status = 'RUNNING'
      WHERE f.to_status = 'PENDING' AND f.from_status IS NOT NULL ORDER BY r.id LIMIT 1)"));
  CHECK(waited >= 0.9);
}
