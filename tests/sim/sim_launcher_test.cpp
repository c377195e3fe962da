// The simulated launcher (tune/launch/sim/launcher.h) as a user meets it: a
// sweep file that says launcher = "sim" runs through the CLI on the nodes
// of its [simulation], a bad [simulation] value is refused like any other,
// reused ranks, and the pool sized by the simulated nodes.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "../tune/curve_experiment.h"
#include "../tune/sqlite_query.h"
#include "storage/experiment_store.h"
#include "tune/launch/sim/launcher.h"

using namespace tune;

namespace {

const char* kSweep = R"(
name = "cli_sim"
metric = "accuracy"
mode = "max"
num_samples = 4
[trainable]
builtin = "learning_curve"
num_workers = 2
[param_space]
iterations = 5
checkpoint_every = 2
speed = { uniform = [0.1, 0.5] }
[cluster]
launcher = "sim"
[simulation]
nodes = 3
cpus_per_node = 2
iteration_s = 0.01
iteration_jitter = 0.5
)";

std::string text_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("a sweep file with launcher = \"sim\" runs through the CLI on its simulated nodes") {
  test::ScratchDir dir;
  dir.write("cli.toml", kSweep);
  const auto run = test::run_tunerun("cli.toml --storage-path runs -q", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto db = dir.path() / "runs/cli_sim/experiment.db";
  CHECK(test::query(db, "SELECT status, count(*) FROM trials GROUP BY status") ==
        std::vector<std::vector<std::string>>{{"TERMINATED", "4"}});
  CHECK(test::query(db,
                    "SELECT count(*), count(DISTINCT trial_id || training_iteration) FROM "
                    "results") == std::vector<std::vector<std::string>>{{"20", "20"}});
  // Every rank ran on a simulated node, two ranks of a trial on one (PACK).
  CHECK(test::query(db, "SELECT count(*) FROM placements WHERE host NOT LIKE 'sim-n_'")[0][0] ==
        "0");
  CHECK(test::query(db,
                    "SELECT count(*) FROM (SELECT trial_id FROM placements GROUP BY "
                    "trial_id, attempt HAVING count(DISTINCT host) > 1)")[0][0] == "0");
  // Checkpoints at 2 and 4, published by the controller from what rank 0 staged.
  auto store = storage::ExperimentStore::open_read_only(dir.path() / "runs/cli_sim");
  for (const auto& trial : store.trials()) {
    INFO(trial.trial_id);
    const auto checkpoints = store.checkpoints(trial.trial_id);
    REQUIRE(checkpoints.size() == 2);
    CHECK(text_of(std::filesystem::path(checkpoints.back().path) / "state.json") == R"({"t":4})");
  }
  // `tunerun status` shows the simulated nodes, all free again.
  const auto status = test::run_tunerun("status runs/cli_sim", dir.path());
  INFO(status.output);
  CHECK(status.output.find("sim-n3") != std::string::npos);
}

TEST_CASE("a bad [simulation] value is refused with the file, line and key") {
  test::ScratchDir dir;
  std::string sweep = kSweep;
  sweep.replace(sweep.find("iteration_jitter = 0.5"), 22, "iteration_jitter = 1.5");
  dir.write("bad.toml", sweep);
  const auto run = test::run_tunerun("validate bad.toml", dir.path());
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("bad.toml:19: key 'simulation.iteration_jitter': must be >= 0 and < 1") !=
        std::string::npos);
  sweep = kSweep;
  sweep.replace(sweep.find("nodes = 3"), 9, "nodes = \"3\"");
  dir.write("typo.toml", sweep);
  const auto typo = test::run_tunerun("validate typo.toml", dir.path());
  CHECK(typo.exit_code == 2);
  CHECK(typo.output.find("typo.toml:16: key 'simulation.nodes': expected an integer") !=
        std::string::npos);
}

TEST_CASE("the simulated nodes size the pool, and a group that never fits on them is refused") {
  test::ScratchDir dir;
  ExperimentSpec spec = test::checkpointed_curve(dir, "sized");
  spec.cluster.launcher = "sim";
  spec.total_cpus = 0;  // the nodes' CPUs: 3 x 2
  spec.simulation.nodes = 3;
  spec.simulation.cpus_per_node = 2;
  spec.num_samples = 6;
  spec.param_space.set("sleep_s", 0.05);
  ExperimentSummary summary = test::run_quietly(spec);
  CHECK(summary.num_terminated == 6);
  const auto db = spec.experiment_dir() / "experiment.db";
  // Six 1-CPU trials at once on the six CPUs: every one started before any finished.
  CHECK(test::query(db,
                    "SELECT count(*) FROM trials WHERE started_at > (SELECT min(finished_at) "
                    "FROM trials)")[0][0] == "0");

  ExperimentSpec strict = test::checkpointed_curve(dir, "strict");
  strict.cluster.launcher = "sim";
  strict.simulation.nodes = 3;
  strict.trainable.num_workers = 4;
  strict.total_cpus = 8;
  strict.trainable.placement_strategy = PlacementStrategy::kStrictSpread;
  CHECK_THROWS_WITH_AS(test::run_quietly(strict), doctest::Contains("never fits on 3 simulated"),
                       ConfigError);
  CHECK_FALSE(std::filesystem::exists(strict.experiment_dir()));
}

TEST_CASE("with reuse_workers, simulated ranks that said DONE run the next trials") {
  test::ScratchDir dir;
  ExperimentSpec spec = test::checkpointed_curve(dir, "reused");
  spec.cluster.launcher = "sim";
  spec.reuse_workers = true;
  spec.num_samples = 6;
  spec.param_space.set("iterations", 5);
  ExperimentSummary summary = test::run_quietly(spec);
  CHECK(summary.num_terminated == 6);
  CHECK(summary.num_results == 30);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  int reused = 0;
  for (const auto& trial : store.trials()) {
    const auto results = store.results(trial.trial_id);
    REQUIRE(results.size() == 5);
    for (int i = 0; i < 5; ++i) CHECK(results[i].training_iteration == i + 1);
    // A rank started for the trial logs where it started; a reused one only what it runs.
    const std::string log = text_of(std::filesystem::path(trial.trial_dir) / "rank_0.log");
    if (log.find("simulated rank 0 of") == std::string::npos) ++reused;
  }
  CHECK(reused >= 1);
}
