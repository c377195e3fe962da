// On the local Slurm cluster: an elastic trial (num_workers = [min, max])
// that loses a node restarts at once with the ranks the nodes left hold; one
// that started small grows when a node frees; one shrunk by a node's loss
// grows back when the node returns, or when resumed in a new allocation.
#include <doctest/doctest.h>

#include <csignal>
#include <thread>

#include "../tune/sqlite_query.h"
#include "local_cluster.h"

using namespace tune;
using test::LocalCluster;

namespace {

// Each result's world size, in iteration order.
std::vector<std::vector<std::string>> world_sizes(const std::filesystem::path& db) {
  return test::query(db,
                     "SELECT json_extract(metrics, '$.world_size') FROM results ORDER BY "
                     "training_iteration");
}

}  // namespace

TEST_CASE("on Slurm, an elastic trial shrinks onto the nodes left when one dies") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // Four 1-CPU ranks fill both nodes; two are enough to go on.
  dir.write("shrink.toml", test::sweep("shrink", "num_workers = [2, 4]\ncpus_per_worker = 1\n",
                                       "speed = 0.1\niterations = 30\nsleep_s = 0.4\n"
                                       "checkpoint_every = 1\n\n[failure]\nmax_failures = 0\n"));
  test::start_in_background(dir,
                            LocalCluster::tunerun_command("run shrink.toml --storage-path runs"));
  const auto db = dir.path() / "runs/shrink/experiment.db";
  REQUIRE(test::eventually([&] { return test::holds_results(db, 3); }, 60));
  REQUIRE(LocalCluster::cluster("crash n2").exit_code == 0);
  const int code = test::exit_code_within(dir, 150);
  const std::string log = test::file_text(dir.path() / "tunerun.log");
  INFO(log);
  CHECK(code == 0);
  CHECK(test::query(db, "SELECT status, num_failures FROM trials") ==
        std::vector<std::vector<std::string>>{{"TERMINATED", "0"}});
  auto sizes = world_sizes(db);
  REQUIRE(sizes.size() == 30);  // every iteration once, across the shrink
  CHECK(sizes.front()[0] == "4");
  CHECK(sizes.back()[0] == "2");
  // The restart after the loss ran on n1 alone, with two ranks.
  CHECK(
      test::query(db, "SELECT count(*), count(DISTINCT host) FROM placements WHERE attempt = 1") ==
      std::vector<std::vector<std::string>>{{"2", "1"}});
  CHECK(log.find("node n2 failed") != std::string::npos);
}

// A rank takes a whole node of three: the short trial gets two nodes, the
// long one starts on the third alone and grows once the short one ended.
const std::string kGrowSweep = test::sweep("grow", "num_workers = [1, 2]\ncpus_per_worker = 2\n",
                                           "speed = 0.1\niterations = { grid_search = [4, 40] }\n"
                                           "sleep_s = 0.4\ncheckpoint_every = 1\n\n[failure]\n"
                                           "max_failures = 0\n");

TEST_CASE("on Slurm, an elastic trial started small grows at a checkpoint once a node frees") {
  LocalCluster cluster(test::ClusterNodes{.nodes = 3});
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("grow.toml", kGrowSweep);
  auto run =
      test::run_shell("cd '" + dir.path().string() + "' && " +
                      LocalCluster::tunerun_command("run grow.toml --storage-path runs", true, 3));
  INFO(run.output);
  CHECK(run.exit_code == 0);
  const auto db = dir.path() / "runs/grow/experiment.db";
  CHECK(test::query(db, "SELECT status, num_failures FROM trials ORDER BY trial_id") ==
        std::vector<std::vector<std::string>>{{"TERMINATED", "0"}, {"TERMINATED", "0"}});
  const std::string long_trial =
      test::query(db, "SELECT trial_id FROM trials WHERE json_extract(config, '$.iterations') = 40")
          .at(0)
          .at(0);
  auto sizes = test::query(db,
                           "SELECT json_extract(metrics, '$.world_size') FROM results WHERE "
                           "trial_id = '" +
                               long_trial + "' ORDER BY training_iteration");
  REQUIRE(sizes.size() == 40);  // every iteration once, across the resize
  CHECK(sizes.front()[0] == "1");
  CHECK(sizes.back()[0] == "2");
  // Its first run held one node; a later one two.
  auto hosts = test::query(db,
                           "SELECT attempt, count(DISTINCT host) FROM placements WHERE "
                           "trial_id = '" +
                               long_trial + "' GROUP BY attempt ORDER BY attempt");
  REQUIRE(hosts.size() >= 2);
  CHECK(hosts.front() == std::vector<std::string>{"0", "1"});
  CHECK(hosts.back()[1] == "2");
}

TEST_CASE("on Slurm, an elastic trial shrunk by a node's loss grows back in a new allocation") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("regrow.toml", test::sweep("regrow", "num_workers = [2, 4]\ncpus_per_worker = 1\n",
                                       "speed = 0.1\niterations = 40\nsleep_s = 0.4\n"
                                       "checkpoint_every = 1\n\n[failure]\nmax_failures = 0\n"));
  const std::string script = fmt::format(
      "'{}' run regrow.toml --storage-path runs --control-address 198.18.0.1 -q & "
      "echo \\$! > controller.pid; wait \\$!",
      TUNERUN_BINARY);
  test::start_in_background(dir, LocalCluster::in_allocation("sh -c \"" + script + "\""));
  const auto db = dir.path() / "runs/regrow/experiment.db";
  auto results_at = [&](int world_size) {
    if (!test::holds_results(db, 0)) return 0;
    return std::stoi(test::query(db, fmt::format("SELECT count(*) FROM results WHERE "
                                                 "json_extract(metrics, '$.world_size') = {}",
                                                 world_size))[0][0]);
  };
  REQUIRE(test::eventually([&] { return results_at(4) >= 3; }, 60));
  REQUIRE(LocalCluster::cluster("crash n2").exit_code == 0);
  // On at two ranks on n1; then the allocation ends (SIGTERM, as at a time
  // limit): the trial pauses at a checkpoint.
  REQUIRE(test::eventually([&] { return results_at(2) >= 2; }, 90));
  const int controller = test::controller_pid(dir);
  REQUIRE(controller > 0);
  REQUIRE(kill(controller, SIGTERM) == 0);
  const int code = test::exit_code_within(dir, 60);
  INFO(test::file_text(dir.path() / "tunerun.log"));
  CHECK(code == 130);
  CHECK(test::query(db, "SELECT status FROM trials")[0][0] == "PAUSED");

  // n2 is back; the resume, in a new allocation of both nodes, runs the
  // trial at four ranks again.
  REQUIRE(LocalCluster::cluster("revive n2").exit_code == 0);
  REQUIRE(test::eventually(
      [] {
        return LocalCluster::cluster("run sinfo -h -n n2 -o %t").output.find("idle") !=
               std::string::npos;
      },
      60));
  auto resumed = cluster.tunerun_in_allocation("resume runs/regrow", dir.path());
  INFO(resumed.output);
  CHECK(resumed.exit_code == 0);
  CHECK(test::query(db, "SELECT status, num_failures FROM trials") ==
        std::vector<std::vector<std::string>>{{"TERMINATED", "0"}});
  auto sizes = world_sizes(db);
  REQUIRE(sizes.size() == 40);  // every iteration once, across the shrink and the regrowth
  CHECK(sizes.front()[0] == "4");
  CHECK(sizes.back()[0] == "4");
  CHECK(results_at(2) >= 2);
  // The resumed run spans both nodes.
  CHECK(test::query(db,
                    "SELECT count(DISTINCT host) FROM placements WHERE attempt = (SELECT "
                    "max(attempt) FROM placements)") ==
        std::vector<std::vector<std::string>>{{"2"}});
}

TEST_CASE("on Slurm, an elastic trial grows back on a node that returns to the allocation") {
  // Slurm slow to notice (60 s, its default is 300): n2, out for 35 s, is
  // back before Slurm takes it out of the job. srun hears of the loss only
  // when n2's slurmd is back; the ranks' silence (10 s) tells tunerun before,
  // and probe steps that n2 is out, then back.
  LocalCluster cluster(test::ClusterNodes{.slurmd_timeout = 60});
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("back.toml", test::sweep("back", "num_workers = [2, 4]\ncpus_per_worker = 1\n",
                                     "speed = 0.1\niterations = 100\nsleep_s = 0.4\n"
                                     "checkpoint_every = 1\n\n[failure]\nmax_failures = 0\n"
                                     "heartbeat_timeout_s = 10\n"));
  test::start_in_background(dir,
                            LocalCluster::tunerun_command("run back.toml --storage-path runs"));
  const auto db = dir.path() / "runs/back/experiment.db";
  REQUIRE(test::eventually([&] { return test::holds_results(db, 3); }, 60));
  REQUIRE(LocalCluster::cluster("crash n2").exit_code == 0);
  std::this_thread::sleep_for(std::chrono::seconds(35));
  REQUIRE(LocalCluster::cluster("revive n2").exit_code == 0);
  const int code = test::exit_code_within(dir, 150);
  INFO(test::file_text(dir.path() / "tunerun.log"));
  CHECK(code == 0);
  CHECK(test::query(db, "SELECT status, num_failures FROM trials") ==
        std::vector<std::vector<std::string>>{{"TERMINATED", "0"}});
  auto sizes = world_sizes(db);
  REQUIRE(sizes.size() == 100);
  std::string seen;
  for (const auto& row : sizes) {
    if (seen.empty() || seen.back() != row[0][0]) seen += row[0];
  }
  CHECK(seen == "424");  // four ranks, two while n2 was out, four again
}
