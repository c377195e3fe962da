// tunerun inside a Slurm allocation on a real (local) Slurm cluster:
// tests/slurm/local_cluster.sh brings up slurmctld and two slurmd "hosts",
// each in its own network, hostname and mount namespace, for each test case
// and tears it down after, pass or fail. Where this machine cannot (not
// root, no namespaces, Slurm not installed) the cases say why and pass.
// Everything is checked through the experiment database.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "../tune/sqlite_query.h"
#include "local_cluster.h"

using namespace tune;
using test::LocalCluster;
using test::sweep;

TEST_CASE("on Slurm, the ranks of a 2-rank trial run on two hosts and every trial terminates") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // Each rank takes a whole node (2 CPUs): the group must spread over both.
  dir.write("spread.toml", sweep("spread", "num_workers = 2\ncpus_per_worker = 2\n",
                                 "speed = { grid_search = [0.1, 0.3] }\niterations = 3\n"));
  auto run = cluster.tunerun_in_allocation("run spread.toml --storage-path runs", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto db = dir.path() / "runs/spread/experiment.db";
  auto trials = test::query(db, "SELECT status FROM trials");
  REQUIRE(trials.size() == 2);
  for (const auto& row : trials) CHECK(row[0] == "TERMINATED");
  CHECK(test::query(db, "SELECT count(*) FROM results")[0][0] == "6");
  auto placed = test::query(db, "SELECT trial_id, rank, host, step FROM placements");
  REQUIRE(placed.size() == 4);
  std::map<std::string, std::set<std::string>> hosts;
  std::set<std::string> steps;
  for (const auto& row : placed) {
    hosts[row[0]].insert(row[2]);
    CHECK(row[3].find('.') != std::string::npos);  // JOB.STEP
    steps.insert(row[0] + "@" + row[3]);
  }
  for (const auto& [trial, on] : hosts) CHECK(on == std::set<std::string>{"n1", "n2"});
  CHECK(steps.size() == 2);  // one job step per trial, both ranks in it
}

TEST_CASE("on Slurm, ranks spread over two nodes learn their local and node ranks") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // Each rank writes what torchrun's variables say of it.
  dir.write("ranks.sh",
            "echo $RANK $LOCAL_RANK $LOCAL_WORLD_SIZE $GROUP_RANK $(hostname) "
            ">\"$TUNERUN_TRIAL_DIR/rank_$RANK.env\"\n"
            "echo '@tunerun {\"x\": 1}'\n");
  dir.write("ranks.toml",
            "name = \"ranks\"\n[trainable]\ncommand = [\"sh\", \"ranks.sh\"]\n"
            "num_workers = 2\ncpus_per_worker = 2\n");
  auto run = cluster.tunerun_in_allocation("run ranks.toml --storage-path runs", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  auto read = [&](int rank) {
    std::ifstream in(dir.path() / fmt::format("runs/ranks/trials/ranks_00000/rank_{}.env", rank));
    std::string line;
    std::getline(in, line);
    return line;
  };
  // RANK LOCAL_RANK LOCAL_WORLD_SIZE GROUP_RANK host: alone on its node, each.
  CHECK(read(0) == "0 0 1 0 n1");
  CHECK(read(1) == "1 0 1 1 n2");
}

TEST_CASE("on Slurm, 1-rank trials fill both nodes' CPUs: four run at once") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("fill.toml",
            sweep("fill", "cpus_per_worker = 1\n",
                  "speed = { grid_search = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8] }\n"
                  "iterations = 4\nsleep_s = 0.4\n"));
  auto run = cluster.tunerun_in_allocation("run fill.toml --storage-path runs", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto db = dir.path() / "runs/fill/experiment.db";
  CHECK(test::query(db, "SELECT count(*) FROM trials WHERE status = 'TERMINATED'")[0][0] == "8");
  // Each trial's time RUNNING, from its status changes: at most 4 overlap, and 4 do.
  auto spans = test::query(db, R"(
      SELECT min(at) FILTER (WHERE to_status = 'RUNNING'),
             min(at) FILTER (WHERE from_status = 'RUNNING')
      FROM trial_events GROUP BY trial_id)");
  std::vector<std::pair<double, int>> edges;
  for (const auto& row : spans) {
    edges.emplace_back(std::stod(row[0]), +1);
    edges.emplace_back(std::stod(row[1]), -1);
  }
  std::sort(edges.begin(), edges.end());  // at a tie an end (-1) comes first
  int running = 0, most = 0;
  for (const auto& [at, delta] : edges) most = std::max(most, running += delta);
  CHECK(most == 4);
  auto per_host = test::query(db, "SELECT host, count(*) FROM placements GROUP BY host");
  REQUIRE(per_host.size() == 2);
  CHECK(per_host[0][0] == "n1");
  CHECK(per_host[1][0] == "n2");
}

TEST_CASE("on Slurm, a controller killed by SIGKILL leaves no task running, and resume finishes") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("orphans.toml", sweep("orphans", "cpus_per_worker = 1\n",
                                  "speed = { grid_search = [0.1, 0.2, 0.3, 0.4] }\n"
                                  "iterations = 30\nsleep_s = 0.1\ncheckpoint_every = 1\n"));
  // The allocation outlives the controller (its shell waits for the file
  // `release`, written when this case ends, however it ends), so that
  // Slurm's end of the job cannot be what kills the tasks.
  struct Release {
    std::filesystem::path file;
    ~Release() { std::ofstream{file}; }
  } release{dir.path() / "release"};
  const std::string script = "'" + std::string(TUNERUN_BINARY) +
                             "' run orphans.toml --storage-path runs --control-address "
                             "198.18.0.1 -q & echo $! > controller.pid; wait; "
                             "while [ ! -e release ]; do sleep 0.1; done";
  test::run_shell("cd '" + dir.path().string() + "' && '" + test::kCluster +
                  "' run salloc --nodes=2 --exclusive --quiet sh -c '" + script +
                  "' >salloc.log 2>&1 &");
  const auto db = dir.path() / "runs/orphans/experiment.db";
  // Four tasks of job steps (srun holds the trial's variables too, not SLURM_STEP_ID).
  auto tasks = [] {
    return test::processes_with_env("TUNERUN_TRIAL_ID=orphans_", "SLURM_STEP_ID=");
  };
  REQUIRE(test::eventually([&] { return tasks().size() == 4; }, 30));
  // Every trial has checkpointed a few iterations: the resume starts from them.
  REQUIRE(test::eventually(
      [&] {
        const auto rows = test::query(
            db, "SELECT count(DISTINCT trial_id) FROM checkpoints WHERE training_iteration >= 3");
        return !rows.empty() && rows[0][0] == "4";
      },
      30));
  const int controller = test::controller_pid(dir);
  REQUIRE(controller > 0);
  REQUIRE(kill(controller, SIGKILL) == 0);
  CHECK(test::eventually(
      [&] { return test::processes_with_env("TUNERUN_TRIAL_ID=orphans_").empty(); }, 10));
  std::ofstream{dir.path() / "release"};  // the first allocation ends

  auto resumed = cluster.tunerun_in_allocation("resume runs/orphans", dir.path());
  INFO(resumed.output);
  REQUIRE(resumed.exit_code == 0);
  CHECK(test::query(db, "SELECT count(*) FROM trials WHERE status = 'TERMINATED'")[0][0] == "4");
  // Every iteration once: nothing lost, nothing duplicated across the restart.
  auto counts = test::query(db, R"(
      SELECT count(*), count(DISTINCT training_iteration), max(training_iteration)
      FROM results GROUP BY trial_id)");
  REQUIRE(counts.size() == 4);
  for (const auto& row : counts) CHECK(row == std::vector<std::string>{"30", "30", "30"});
  // The resumed runs are placed too, in job steps of the new allocation.
  CHECK(test::query(db, "SELECT count(DISTINCT step) FROM placements")[0][0] == "8");
}
