// The faults the simulated launcher injects (tune/launch/sim/launcher.h), as
// the controller meets them: simulated ranks that die fail their trials,
// which restart from their checkpoints within max_failures; a simulated
// node lost takes its ranks with it and charges no trial, and an elastic
// trial goes on with the ranks the other nodes hold.
#include <doctest/doctest.h>

#include <memory>

#include "../tune/curve_experiment.h"
#include "../tune/sqlite_query.h"
#include "storage/experiment_store.h"
#include "tune/callback.h"
#include "tune/launch/sim/launcher.h"

using namespace tune;

namespace {

// A checkpointed curve on `nodes` simulated nodes of `cpus` CPUs, the pool
// sized by them.
ExperimentSpec on_nodes(const test::ScratchDir& dir, const std::string& name, int nodes, int cpus) {
  ExperimentSpec spec = test::checkpointed_curve(dir, name);
  spec.cluster.launcher = "sim";
  spec.total_cpus = 0;
  spec.simulation.nodes = nodes;
  spec.simulation.cpus_per_node = cpus;
  spec.simulation.node_recovery_s = 0;  // a lost node stays lost
  return spec;
}

// Loses simulated node `node` once, at the first result of iteration `at`.
class LoseNodeAt final : public Callback {
 public:
  LoseNodeAt(std::shared_ptr<SimLauncher> launcher, int node, int64_t at)
      : launcher_(std::move(launcher)), node_(node), at_(at) {}
  void on_trial_result(const std::string&, const Json&, const Json& result) override {
    if (!lost_ && result["training_iteration"] == at_) {
      lost_ = true;
      launcher_->lose_node(node_);
    }
  }

 private:
  std::shared_ptr<SimLauncher> launcher_;
  int node_;
  int64_t at_;
  bool lost_ = false;
};

ExperimentSummary run_losing_node(const ExperimentSpec& spec, int node, int64_t at) {
  auto launcher =
      std::make_shared<SimLauncher>(spec.simulation, find_sim_peers_executable(TUNERUN_BINARY));
  TrialController controller(spec,
                             {.worker_argv = {TUNERUN_BINARY},
                              .launcher = launcher,
                              .verbosity = 0,
                              .callbacks = {std::make_shared<LoseNodeAt>(launcher, node, at)}});
  return controller.run();
}

// Iterations 1..n of the trial, each once.
void check_contiguous(const storage::ExperimentStore& store, const std::string& trial, int64_t n) {
  INFO(trial);
  auto results = store.results(trial);
  REQUIRE(results.size() == static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) CHECK(results[i].training_iteration == i + 1);
}

}  // namespace

TEST_CASE("simulated ranks that die fail their trials, which restart from checkpoints") {
  test::ScratchDir dir;
  ExperimentSpec spec = on_nodes(dir, "deaths", 2, 2);
  spec.trainable.num_workers = 2;
  spec.num_samples = 2;
  spec.param_space.set("iterations", 20);
  spec.param_space.set("sleep_s", 0.02);
  // A rank lives 0.3 s on average: a trial of 0.4 s rarely runs through in one go.
  spec.simulation.rank_death_rate = 3600 / 0.3;
  spec.simulation.seed = 11;
  spec.max_failures = -1;
  ExperimentSummary summary = test::run_quietly(spec);
  CHECK(summary.num_terminated == 2);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  int64_t failures = 0;
  for (const auto& trial : store.trials()) {
    check_contiguous(store, trial.trial_id, 20);
    failures += trial.num_failures;
  }
  CHECK(failures >= 1);
  CHECK(test::query(spec.experiment_dir() / "experiment.db",
                    "SELECT count(*) FROM trial_events WHERE reason LIKE '%killed by signal 9%'")
            .at(0)
            .at(0) != "0");
}

TEST_CASE("a simulated node lost under running trials charges none of them") {
  test::ScratchDir dir;
  // Two 1-CPU nodes, four 1-rank trials: two run at once, one on each node.
  ExperimentSpec spec = on_nodes(dir, "node_lost", 2, 1);
  spec.num_samples = 4;
  spec.param_space.set("sleep_s", 0.05);
  spec.max_failures = 0;
  ExperimentSummary summary = run_losing_node(spec, 1, 3);
  CHECK(summary.num_terminated == 4);
  CHECK(summary.num_errors == 0);
  auto store = storage::ExperimentStore::open_read_only(spec.experiment_dir());
  for (const auto& trial : store.trials()) {
    CHECK(trial.num_failures == 0);
    check_contiguous(store, trial.trial_id, 8);
  }
  const auto db = spec.experiment_dir() / "experiment.db";
  // The trial on sim-n2 restarted on sim-n1; nothing ran on sim-n2 after.
  CHECK(test::query(db,
                    "SELECT count(*) FROM trial_events WHERE reason LIKE "
                    "'%not counted%node sim-n2 lost (simulated: lost by the launcher)'")[0][0] ==
        "1");
  CHECK(test::query(db,
                    "SELECT count(*) FROM placements WHERE attempt > 0 AND host = "
                    "'sim-n2'")[0][0] == "0");
}

TEST_CASE("an elastic trial shrinks onto the simulated nodes left when one is lost") {
  test::ScratchDir dir;
  // Four 1-CPU ranks fill both nodes; two are enough to go on.
  ExperimentSpec spec = on_nodes(dir, "shrink", 2, 2);
  spec.trainable.min_workers = 2;
  spec.trainable.num_workers = 4;
  spec.param_space.set("iterations", 30);
  spec.param_space.set("sleep_s", 0.02);
  spec.max_failures = 0;
  ExperimentSummary summary = run_losing_node(spec, 1, 3);
  CHECK(summary.num_terminated == 1);
  const auto db = spec.experiment_dir() / "experiment.db";
  CHECK(test::query(db, "SELECT status, num_failures FROM trials") ==
        std::vector<std::vector<std::string>>{{"TERMINATED", "0"}});
  // Every iteration once, on 4 ranks until the loss and on 2 from then on
  // (the node stays lost: the trial never grows back).
  const auto rows = test::query(db,
                                "SELECT training_iteration, json_extract(metrics, '$.world_size') "
                                "FROM results ORDER BY training_iteration");
  REQUIRE(rows.size() == 30);
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO("iteration ", rows[i][0], " on ", rows[i][1], " ranks");
    CHECK(rows[i][0] == std::to_string(i + 1));
    CHECK(rows[i][1] == (i == 0 || rows[i - 1][1] == "4" ? rows[i][1] : "2"));
  }
  CHECK(rows.front()[1] == "4");
  CHECK(rows.back()[1] == "2");
  // The restart after the loss ran on sim-n1 alone, with two ranks.
  CHECK(test::query(db,
                    "SELECT count(*), count(DISTINCT host), min(host) FROM placements WHERE "
                    "attempt = 1") == std::vector<std::vector<std::string>>{{"2", "1", "sim-n1"}});
}
