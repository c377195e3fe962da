// On the local Slurm cluster: what ends a run's hold on its allocation
// without any trial's fault. A loopback control address is refused before
// anything runs; a rank killed is seen from srun's line at once; trials
// that no node left can hold, an allocation revoked and a time limit near
// all pause every trial and exit 130, and the printed resume finishes
// every trial in a new allocation without the control address again.
#include <doctest/doctest.h>

#include <csignal>
#include <fstream>

#include "../tune/sqlite_query.h"
#include "local_cluster.h"

using namespace tune;
using test::LocalCluster;

namespace {

// Every trial's status, and its results against its distinct iterations.
std::vector<std::vector<std::string>> trial_statuses(const std::filesystem::path& db) {
  return test::query(db,
                     "SELECT t.status, count(r.training_iteration), "
                     "count(DISTINCT r.training_iteration) FROM trials t LEFT JOIN results r "
                     "ON r.trial_id = t.trial_id GROUP BY t.trial_id ORDER BY t.trial_id");
}

// Two trials of two 1-CPU ranks each, which fill both nodes.
const std::string kTwoTrials =
    test::sweep("pair", "num_workers = 2\ncpus_per_worker = 1\n",
                "speed = 0.1\niterations = 40\nsleep_s = { grid_search = [0.3, 0.4] }\n"
                "checkpoint_every = 1\n");

// `tunerun resume runs/NAME` in a new 2-node allocation, with no control
// address on its command line: the experiment stored the one its run used.
void resume_finishes_every_trial(const test::ScratchDir& dir, const std::string& name) {
  auto resumed =
      test::run_shell("cd '" + dir.path().string() + "' && " +
                      LocalCluster::tunerun_command("resume runs/" + name, /*address=*/false));
  INFO(resumed.output);
  CHECK(resumed.exit_code == 0);
  const auto rows = trial_statuses(dir.path() / "runs" / name / "experiment.db");
  CHECK(rows == std::vector<std::vector<std::string>>{{"TERMINATED", "40", "40"},
                                                      {"TERMINATED", "40", "40"}});
}

}  // namespace

TEST_CASE("on Slurm, a loopback control address is refused before anything runs") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("loop.toml", test::sweep("loop", "", "speed = 0.1\niterations = 3\n") +
                             "\n[cluster]\nlauncher = \"slurm\"\ncontrol_address = "
                             "\"127.0.0.1\"\n");
  auto validate = test::run_tunerun("validate loop.toml", dir.path());
  INFO(validate.output);
  CHECK(validate.exit_code == 2);
  CHECK(validate.output.find("cluster.control_address") != std::string::npos);
  CHECK(validate.output.find("loopback") != std::string::npos);
  CHECK(validate.output.find("control_interface") != std::string::npos);

  // `hostname -i`'s answer on many hosts, given on the command line inside
  // an allocation (launcher auto): refused at once, naming the key.
  dir.write("auto.toml", test::sweep("auto", "", "speed = 0.1\niterations = 3\n"));
  auto run = test::run_shell(
      "cd '" + dir.path().string() + "' && " +
      LocalCluster::tunerun_command("run auto.toml --storage-path runs --control-address "
                                    "127.0.0.1",
                                    false));
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("cluster.control_address") != std::string::npos);
  CHECK(run.output.find("127.0.0.1 is a loopback address") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "runs/auto/experiment.db"));
}

TEST_CASE("on Slurm, a rank killed ends its group from srun's line, not a heartbeat timeout") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // A heartbeat timeout longer than the case waits: only srun's word can end the group.
  dir.write("kill.toml", test::sweep("kill", "num_workers = 2\ncpus_per_worker = 1\n",
                                     "speed = 0.1\niterations = 30\nsleep_s = 0.3\n"
                                     "checkpoint_every = 1\n\n[failure]\nmax_failures = 1\n"
                                     "heartbeat_timeout_s = 200\n"));
  // Not quiet: the log says how the group ended.
  test::start_in_background(
      dir, LocalCluster::in_allocation(std::string(TUNERUN_BINARY) +
                                       " run kill.toml --storage-path runs --control-address "
                                       "198.18.0.1"));
  const auto db = dir.path() / "runs/kill/experiment.db";
  REQUIRE(test::eventually([&] { return test::holds_results(db, 3); }, 60));
  const auto ranks =
      test::processes_with_env(std::string("SLURM_PROCID=0") + '\0', "TUNERUN_CONTROLLER");
  REQUIRE(ranks.size() == 1);
  ::kill(ranks[0], SIGKILL);
  const int code = test::exit_code_within(dir, 60);
  const std::string log = test::file_text(dir.path() / "tunerun.log");
  INFO(log);
  CHECK(code == 0);
  CHECK(log.find("rank 0 killed by signal 9") != std::string::npos);
  CHECK(log.find("heartbeat timeout") == std::string::npos);
  // The rank's death was its own: its nodes were not suspected, nor probed.
  CHECK(log.find("probe") == std::string::npos);
  CHECK(log.find("retired") == std::string::npos);
  CHECK(trial_statuses(db) == std::vector<std::vector<std::string>>{{"TERMINATED", "30", "30"}});
}

TEST_CASE("on Slurm, trials no node left can hold pause and the run exits resumable") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // One group spans both nodes (a rank takes a whole node): without n2
  // it cannot run, and nothing tells when n2 returns. node_wait_s: 60 s.
  dir.write("stuck.toml", test::sweep("stuck", "num_workers = 2\ncpus_per_worker = 2\n",
                                      "speed = 0.1\niterations = 60\nsleep_s = 0.3\n"
                                      "checkpoint_every = 1\n"));
  test::start_in_background(dir,
                            LocalCluster::tunerun_command("run stuck.toml --storage-path runs"));
  const auto db = dir.path() / "runs/stuck/experiment.db";
  REQUIRE(test::eventually([&] { return test::holds_results(db, 3); }, 60));
  REQUIRE(LocalCluster::cluster("crash n2").exit_code == 0);
  const int code = test::exit_code_within(dir, 150);
  const std::string log = test::file_text(dir.path() / "tunerun.log");
  INFO(log);
  CHECK(code == 130);
  CHECK(log.find("cluster.node_wait_s") != std::string::npos);
  CHECK(log.find("waiting: stuck_00000") != std::string::npos);
  CHECK(log.find("n2: 2 CPUs (0 in use), 0 GPUs (0 in use), failed once") != std::string::npos);
  CHECK(log.find("tunerun resume " + (dir.path() / "runs/stuck").string()) != std::string::npos);
  CHECK(test::query(db, "SELECT status FROM trials") ==
        std::vector<std::vector<std::string>>{{"PENDING"}});
}

TEST_CASE(
    "on Slurm, an allocation revoked under salloc pauses every trial and the resume needs no "
    "address") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("pair.toml", kTwoTrials);
  test::start_in_background(dir,
                            "'" + test::kCluster +
                                "' run salloc --nodes=2 --exclusive --no-kill --quiet sh -c 'echo "
                                "$SLURM_JOB_ID > job; exec " +
                                TUNERUN_BINARY +
                                " run pair.toml --storage-path runs --control-address "
                                "198.18.0.1 -q'");
  const auto db = dir.path() / "runs/pair/experiment.db";
  REQUIRE(test::eventually([&] { return test::holds_results(db, 6); }, 60));
  REQUIRE(LocalCluster::cluster("run scancel " + test::file_text(dir.path() / "job")).exit_code ==
          0);
  const int code = test::exit_code_within(dir, 60);
  const std::string log = test::file_text(dir.path() / "tunerun.log");
  INFO(log);
  CHECK(code == 130);
  CHECK(log.find("allocation") != std::string::npos);
  CHECK(log.find("ERROR") == std::string::npos);
  for (const auto& row : test::query(db, "SELECT status FROM trials")) CHECK(row[0] == "PAUSED");
  // Private by default, and the run's keys went with it.
  CHECK((std::filesystem::status(dir.path() / "runs/pair").permissions() &
         std::filesystem::perms::all) == std::filesystem::perms::owner_all);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "runs/pair/keys"));
  // The lock went with the controller: an immediate resume runs.
  resume_finishes_every_trial(dir, "pair");
}

TEST_CASE("on Slurm, a time limit near pauses every trial and the resume finishes them") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // A 1-minute allocation whose last 50 s are the margin: the trials pause
  // about 10 s in, well before Slurm would kill them.
  dir.write("pair.toml", kTwoTrials + "\n[cluster]\nend_margin_s = 50\n");
  test::start_in_background(
      dir, "'" + test::kCluster + "' run salloc --nodes=2 --exclusive --no-kill --time=1 --quiet " +
               TUNERUN_BINARY +
               " run pair.toml --storage-path runs --control-address "
               "198.18.0.1 -q");
  const int code = test::exit_code_within(dir, 100);
  const std::string log = test::file_text(dir.path() / "tunerun.log");
  INFO(log);
  CHECK(code == 130);
  CHECK(log.find("reaches its time limit") != std::string::npos);
  const auto db = dir.path() / "runs/pair/experiment.db";
  for (const auto& row : test::query(db, "SELECT status FROM trials")) CHECK(row[0] == "PAUSED");
  resume_finishes_every_trial(dir, "pair");
}

TEST_CASE("on Slurm, the sbatch recipe runs as written and a requeued job resumes by itself") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("sweep.toml", kTwoTrials);
  // docs/clusters.md's batch script, on this cluster's 2 nodes: the
  // controller runs on the first node, at the address `hostname -I` gives there.
  dir.write("job.sh", std::string("#!/bin/sh\n#SBATCH -N 2 --exclusive --no-kill -t 8:00:00\n"
                                  "#SBATCH --signal=B:TERM@120 --requeue\n"
                                  "exec ") +
                          TUNERUN_BINARY +
                          " sweep.toml --control-address \"$(hostname -I | cut -d' ' -f1)\"\n");
  auto submit = LocalCluster::cluster("run sh -c \"cd '" + dir.path().string() +
                                      "' && sbatch --parsable -o out.txt job.sh\"");
  INFO(submit.output);
  REQUIRE(submit.exit_code == 0);
  const std::string job = submit.output.substr(0, submit.output.find_first_of(";\n"));
  const auto db = dir.path() / "runs/pair/experiment.db";
  REQUIRE(test::eventually([&] { return test::holds_results(db, 6); }, 60));
  // Slurm kills the job and runs its script again: the run resumes.
  auto requeue = LocalCluster::cluster("run scontrol requeue " + job);
  INFO(requeue.output);
  REQUIRE(requeue.exit_code == 0);
  // Slurm holds a requeued job back a while (its begin time); not the case's subject.
  test::eventually(
      [&] {
        return LocalCluster::cluster("run scontrol update JobId=" + job + " StartTime=now")
                   .exit_code == 0;
      },
      10);
  CHECK(test::eventually(
      [&] {
        return LocalCluster::cluster("run squeue -h -j " + job).output.find_first_not_of(" \n") ==
                   std::string::npos &&
               test::query(db, "SELECT count(*) FROM trials WHERE status = 'TERMINATED'")[0][0] ==
                   "2";
      },
      200));
  const std::string out = test::file_text(dir.path() / "out.txt");
  INFO(out);
  CHECK(out.find("Slurm requeued job " + job) != std::string::npos);
  CHECK(trial_statuses(db) == std::vector<std::vector<std::string>>{{"TERMINATED", "40", "40"},
                                                                    {"TERMINATED", "40", "40"}});
}
