// On the local Slurm cluster: a node that dies under a running trial, one
// where Slurm holds every step of ours, and an experiment directory that
// one node does not share.
#include <doctest/doctest.h>

#include <csignal>
#include <set>
#include <thread>

#include "../tune/sqlite_query.h"
#include "local_cluster.h"
#include "tune/launch/nodes.h"

using namespace tune;
using test::LocalCluster;

namespace {

// The experiment's results for `trial`: how many, how many distinct
// iterations, the last one.
std::vector<std::string> iteration_counts(const std::filesystem::path& db,
                                          const std::string& trial) {
  return test::query(db,
                     "SELECT count(*), count(DISTINCT training_iteration), "
                     "max(training_iteration) FROM results WHERE trial_id = '" +
                         trial + "'")[0];
}

// `node`'s failures and health as the experiment recorded them (for `tunerun status`).
std::vector<std::string> recorded_node(const std::filesystem::path& db, const std::string& node) {
  auto rows = test::query(db, R"(
      SELECT json_extract(n.value, '$.failures'), json_extract(n.value, '$.health')
      FROM experiment_state, json_each(experiment_state.value) AS n
      WHERE experiment_state.key = 'nodes' AND json_extract(n.value, '$.name') = ')" +
                                  node + "'");
  return rows.empty() ? std::vector<std::string>{} : rows[0];
}

// Whether the placements table exists yet (the controller may still be creating the schema).
bool has_schema(const std::filesystem::path& db) {
  return std::filesystem::exists(db) &&
         test::query(db, "SELECT count(*) FROM sqlite_master WHERE name = 'placements'")[0][0] !=
             "0";
}

// A trial with a rank on `host` and at least 3 results; empty while none.
std::string trial_running_on(const std::filesystem::path& db, const std::string& host) {
  if (!has_schema(db)) return "";
  auto rows = test::query(db, "SELECT p.trial_id FROM placements p WHERE p.host = '" + host +
                                  "' AND (SELECT count(*) FROM results r WHERE r.trial_id = "
                                  "p.trial_id) >= 3");
  return rows.empty() ? "" : rows[0][0];
}

// The line of `tunerun status`'s host table that starts with `host`.
std::string status_line(const std::string& output, const std::string& host) {
  const size_t at = output.find("\n" + host + " ");
  if (at == std::string::npos) return "";
  return output.substr(at + 1, output.find('\n', at + 1) - at - 1);
}

// Runs `tunerun run SWEEP` from `dir` in a 2-node allocation beside a step
// tunerun does not know of, which holds every CPU of `node` for `seconds`
// (cancelled when tunerun exits): a trial step placed there waits inside
// Slurm, its CPUs free as tunerun counts them, while probe steps
// (--overlap) pass there. tunerun starts once squeue lists the foreign step
// (named after its command), or fails the run after 10 s without it.
test::CommandResult run_beside_foreign_step(const std::filesystem::path& dir,
                                            const std::string& sweep, const std::string& node,
                                            int seconds) {
  const std::string script = fmt::format(
      "srun --jobid=\\$SLURM_JOB_ID --quiet --nodelist={} --nodes=1 --ntasks=1 --exclusive "
      "--cpus-per-task=2 sleep {} & i=0; "
      "until squeue -h -s -j \\$SLURM_JOB_ID -o %j | grep -qx sleep; do "
      "i=\\$((i + 1)); [ \\$i -lt 100 ] || {{ echo the foreign step never started; exit 1; }}; "
      "sleep 0.1; done; '{}' run {} --storage-path runs --control-address "
      "198.18.0.1 -q; code=\\$?; kill \\$!; wait; exit \\$code",
      node, seconds, TUNERUN_BINARY, sweep);
  return test::run_shell("cd '" + dir.string() + "' && " +
                         LocalCluster::in_allocation("sh -c \"" + script + "\""));
}

}  // namespace

TEST_CASE("on Slurm, a trial whose node dies restarts from its checkpoint on the other node") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // Each trial takes a whole node; max_failures lets the victim retry. The
  // first trial (on n1) outlasts the failure's detection: meanwhile only the
  // dead n2 is free, and a retry placed there would fail again and again.
  dir.write("crash.toml",
            test::sweep("crash", "cpus_per_worker = 2\n",
                        "speed = 0.1\niterations = 40\nsleep_s = { grid_search = [0.8, 0.2] }\n"
                        "checkpoint_every = 1\n\n[failure]\nmax_failures = 2\n\n"
                        // The controller's address from the bridge the nodes hang on.
                        "[cluster]\nlauncher = \"slurm\"\ncontrol_interface = \"trslurm0\"\n"));
  test::start_in_background(
      dir, LocalCluster::tunerun_command("run crash.toml --storage-path runs", false));
  const auto db = dir.path() / "runs/crash/experiment.db";
  // The trial on n2, once it has checkpointed a few iterations.
  std::string victim;
  REQUIRE(test::eventually([&] { return !(victim = trial_running_on(db, "n2")).empty(); }, 60));
  // `tunerun status` shows both nodes full, each running one trial's rank.
  auto status = test::run_tunerun("status runs/crash", dir.path());
  INFO(status.output);
  CHECK(status.output.find("CPUs used") != std::string::npos);
  CHECK(status_line(status.output, "n2").find("2/2") != std::string::npos);
  CHECK(status_line(status.output, "n2").find(victim + "/0 (step") != std::string::npos);
  CHECK(status_line(status.output, "n1").find("2/2") != std::string::npos);

  auto crash = LocalCluster::cluster("crash n2");
  INFO(crash.output);
  REQUIRE(crash.exit_code == 0);
  const int code = test::exit_code_within(dir, 100);
  const std::string log = test::file_text(dir.path() / "tunerun.log");
  INFO(log);
  REQUIRE(code == 0);
  CHECK(log.find("node n2 failed") != std::string::npos);
  auto after = test::run_tunerun("status runs/crash", dir.path());
  INFO(after.output);
  CHECK(status_line(after.output, "n2").find("failed once") != std::string::npos);
  CHECK(status_line(after.output, "n1").find("usable") != std::string::npos);

  CHECK(test::query(db, "SELECT count(*) FROM trials WHERE status = 'TERMINATED'")[0][0] == "2");
  // Every iteration exactly once, across the restart.
  for (const auto& row : test::query(db, "SELECT trial_id FROM trials")) {
    CHECK(iteration_counts(db, row[0]) == std::vector<std::string>{"40", "40", "40"});
  }
  // The victim's first attempt ran on n2; every later one on n1, from a checkpoint.
  auto placed = test::query(
      db, "SELECT attempt, host FROM placements WHERE trial_id = '" + victim + "' ORDER BY id");
  REQUIRE(placed.size() >= 2);
  CHECK(placed.front() == std::vector<std::string>{"0", "n2"});
  for (size_t i = 1; i < placed.size(); ++i) CHECK(placed[i][1] == "n1");
  auto resumed = test::query(db, "SELECT reason FROM trial_events WHERE trial_id = '" + victim +
                                     "' AND reason LIKE 'resumed from checkpoint %'");
  REQUIRE(!resumed.empty());
  CHECK(resumed.back()[0] != "resumed from checkpoint 0");
}

TEST_CASE("on Slurm, a node Slurm took out of the allocation is not used again, one failure") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // One trial per node at a time; enough trials that some wait for a node
  // until n2's second failure: Slurm declares n2 down ~5-10 s after the
  // crash (SlurmdTimeout, then its next ping), and its state is read every
  // 2 s here, so n2 is known gone ~20 s into the run, which lasts ~45 s.
  dir.write("twice.toml", test::sweep("twice", "cpus_per_worker = 2\n",
                                      "speed = { grid_search = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6] }\n"
                                      "iterations = 15\nsleep_s = 0.5\ncheckpoint_every = 1\n\n"
                                      "[failure]\nmax_failures = 3\n\n"
                                      "[cluster]\nslurm_poll_s = 2\n"));
  test::start_in_background(dir,
                            LocalCluster::tunerun_command("run twice.toml --storage-path runs"));
  const auto db = dir.path() / "runs/twice/experiment.db";
  auto log = [&] { return test::file_text(dir.path() / "tunerun.log"); };
  auto running_on_n2 = [&] {
    // The controller may still be creating the schema.
    if (!std::filesystem::exists(db) ||
        test::query(db, "SELECT count(*) FROM sqlite_master WHERE name = 'placements'")[0][0] ==
            "0") {
      return false;
    }
    return test::query(db,
                       "SELECT count(*) FROM results JOIN placements USING (trial_id) "
                       "WHERE host = 'n2'")[0][0] != "0";
  };
  auto logged = [&](const std::string& text) { return log().find(text) != std::string::npos; };
  // First failure: n2 dies under its trial.
  REQUIRE(test::eventually(running_on_n2, 60));
  REQUIRE(LocalCluster::cluster("crash n2").exit_code == 0);
  REQUIRE(test::eventually([&] { return logged("node n2 failed ("); }, 60));
  // It comes back, outside the job's allocation now (Slurm took the failed
  // node out of the --no-kill job): its probe step fails for that, which is
  // no second failure.
  REQUIRE(LocalCluster::cluster("revive n2").exit_code == 0);
  const int code = test::exit_code_within(dir, 150);
  INFO(log());
  REQUIRE(code != -1);  // it exited in time
  CHECK(code == 0);
  CHECK(logged("node n2 is no longer in allocation"));
  CHECK_FALSE(logged("node n2 failed twice"));
  CHECK(logged("it is not used again in this run"));
  CHECK(test::query(db, "SELECT count(*) FROM trials WHERE status = 'TERMINATED'")[0][0] == "6");
  for (const auto& row : test::query(db, "SELECT trial_id FROM trials")) {
    CHECK(iteration_counts(db, row[0]) == std::vector<std::string>{"15", "15", "15"});
  }
  // Only the attempt that was running when it died ever ran on n2.
  CHECK(test::query(db, "SELECT count(*) FROM placements WHERE host = 'n2'")[0][0] == "1");
  auto after = test::run_tunerun("status runs/twice", dir.path());
  INFO(after.output);
  CHECK(status_line(after.output, "n2").find("retired") != std::string::npos);
}

TEST_CASE("on Slurm, an experiment directory one node does not share is refused at start") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("private.toml", test::sweep("private", "", "speed = 0.1\niterations = 2\n"));
  // n2 sees its own empty tmpfs where the others see runs/.
  std::filesystem::create_directories(dir.path() / "runs");
  auto mount = LocalCluster::cluster("exec n2 mount -t tmpfs tmpfs '" +
                                     (dir.path() / "runs").string() + "'");
  INFO(mount.output);
  REQUIRE(mount.exit_code == 0);
  auto run = cluster.tunerun_in_allocation("run private.toml --storage-path runs", dir.path());
  INFO(run.output);
  CHECK(run.exit_code != 0);
  CHECK(run.output.find("node(s) n2") != std::string::npos);
  CHECK(run.output.find((dir.path() / "runs/private").string()) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "runs/private/experiment.db"));
}

TEST_CASE("on Slurm, a node lost under running trials costs no trial a failure and counts once") {
  LocalCluster cluster(test::ClusterNodes{.nodes = 3});
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // Six trials of two 1-CPU ranks on three 2-CPU nodes: three run at once,
  // each on a node of its own. No failure is allowed: n2's is not theirs.
  dir.write("lost.toml", test::sweep("lost", "num_workers = 2\ncpus_per_worker = 1\n",
                                     "speed = { grid_search = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6] }\n"
                                     "iterations = 25\nsleep_s = 0.4\ncheckpoint_every = 1\n\n"
                                     "[failure]\nmax_failures = 0\n"));
  test::start_in_background(
      dir, LocalCluster::tunerun_command("run lost.toml --storage-path runs", true, 3));
  const auto db = dir.path() / "runs/lost/experiment.db";
  std::string victim;
  REQUIRE(test::eventually([&] { return !(victim = trial_running_on(db, "n2")).empty(); }, 60));
  REQUIRE(LocalCluster::cluster("crash n2").exit_code == 0);
  // The outage under test, not a wait: n2 comes back within Slurm's
  // SlurmdTimeout (5 s), possibly before Slurm noticed.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  REQUIRE(LocalCluster::cluster("revive n2").exit_code == 0);
  const int code = test::exit_code_within(dir, 200);
  const std::string log = test::file_text(dir.path() / "tunerun.log");
  INFO(log);
  REQUIRE(code != -1);  // it exited in time
  CHECK(code == 0);
  CHECK(test::query(db, "SELECT count(*) FROM trials WHERE status = 'TERMINATED'")[0][0] == "6");
  CHECK(test::query(db, "SELECT sum(num_failures) FROM trials")[0][0] == "0");
  for (const auto& row : test::query(db, "SELECT trial_id FROM trials")) {
    CHECK(iteration_counts(db, row[0]) == std::vector<std::string>{"25", "25", "25"});
  }
  // The log and the victim's events say that the node failed, not that its ranks did.
  CHECK(log.find("node n2 failed") != std::string::npos);
  CHECK(log.find("without reporting DONE") == std::string::npos);
  auto events = test::query(db, "SELECT reason FROM trial_events WHERE trial_id = '" + victim +
                                    "' AND reason LIKE '%node n2 failed%'");
  CHECK(!events.empty());
  // The crash is one failure, counted once however it was seen; after it,
  // n2 is no longer "suspected". Back before Slurm noticed, n2 may hold
  // every later step of ours pending (Slurm still counts the killed step's
  // CPUs there): that is a failure of its own, which retires it.
  const bool held_there = log.find("] node n2 failed twice (3 steps in a row") != std::string::npos;
  size_t failed_lines = 0;
  for (size_t at = log.find("] node n2 failed"); at != std::string::npos;
       at = log.find("] node n2 failed", at + 1)) {
    ++failed_lines;
  }
  CHECK(failed_lines == (held_there ? 2 : 1));
  const auto n2 = recorded_node(db, "n2");
  REQUIRE(n2.size() == 2);
  CHECK(n2[0] == (held_there ? "2" : "1"));
  CHECK(n2[1] != "suspected");
  for (const char* node : {"n1", "n3"}) CHECK(recorded_node(db, node)[1] == "usable");

  // A resume (in an allocation holding n2 again) keeps n2's failures.
  REQUIRE(test::eventually(
      [] {
        return LocalCluster::cluster("run sinfo -h -n n2 -o %t").output.find("idle") !=
               std::string::npos;
      },
      60));
  auto resumed = test::run_shell("cd '" + dir.path().string() + "' && " +
                                 LocalCluster::tunerun_command("resume runs/lost", true, 3));
  INFO(resumed.output);
  CHECK(resumed.exit_code == 0);
  CHECK(recorded_node(db, "n2")[0] == n2[0]);
}

TEST_CASE("on Slurm, the storage check skips a node that died before Slurm knows, and says so") {
  // Slurm slow to notice: the check must meet n2 dead but not yet reported.
  LocalCluster cluster(test::ClusterNodes{.slurmd_timeout = 10});
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("dead.toml", test::sweep("dead", "cpus_per_worker = 1\n",
                                     "speed = { grid_search = [0.1, 0.2] }\niterations = 3\n"));
  // n2 dies inside the allocation, a moment before tunerun starts: Slurm
  // still lists it as allocated (it notices after SlurmdTimeout, 10 s).
  const std::string script = "'" + test::kCluster + "' crash n2 && '" +
                             std::string(TUNERUN_BINARY) +
                             "' run dead.toml --storage-path runs --control-address 198.18.0.1 -q";
  auto run = test::run_shell("cd '" + dir.path().string() + "' && " +
                             LocalCluster::in_allocation("sh -c \"" + script + "\""));
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("the storage check skipped node(s) n2 (a step could not run there") !=
        std::string::npos);
  CHECK(run.output.find("not shared") == std::string::npos);
  const auto db = dir.path() / "runs/dead/experiment.db";
  CHECK(test::query(db, "SELECT count(*) FROM trials WHERE status = 'TERMINATED'")[0][0] == "2");
  CHECK(test::query(db, "SELECT count(*) FROM placements WHERE host = 'n2'")[0][0] == "0");
}

TEST_CASE("on Slurm, a step Slurm holds pending is placed again, never charged as a failure") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // Two trials of a whole node each; no failure allowed, and a rank silent
  // 12 s would be one.
  dir.write("held.toml", test::sweep("held", "cpus_per_worker = 2\n",
                                     "speed = { grid_search = [0.1, 0.2] }\niterations = 20\n"
                                     "sleep_s = 0.5\ncheckpoint_every = 1\n\n[failure]\n"
                                     "max_failures = 0\nheartbeat_timeout_s = 12\n"));
  // n2's CPUs are held for 25 s.
  auto run = run_beside_foreign_step(dir.path(), "held.toml", "n2", 25);
  INFO(run.output);
  CHECK(run.exit_code == 0);
  const auto db = dir.path() / "runs/held/experiment.db";
  CHECK(test::query(db, "SELECT status, num_failures FROM trials") ==
        std::vector<std::vector<std::string>>{{"TERMINATED", "0"}, {"TERMINATED", "0"}});
  for (const auto& row : test::query(db, "SELECT trial_id FROM trials")) {
    CHECK(iteration_counts(db, row[0]) == std::vector<std::string>{"20", "20", "20"});
  }
  CHECK(test::query(db,
                    "SELECT count(*) FROM trial_events WHERE reason LIKE "
                    "'%Slurm holds its step pending%'")[0][0] != "0");
  CHECK(run.output.find("heartbeat timeout") == std::string::npos);
}

TEST_CASE("on Slurm, a node where Slurm holds every step of ours fails, and the trial goes on") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("stuck.toml", test::sweep("stuck", "cpus_per_worker = 2\n",
                                      "speed = 0.1\niterations = 10\nsleep_s = 0.3\n"
                                      "checkpoint_every = 1\n\n[failure]\nmax_failures = 0\n"));
  // n1's CPUs are held longer than the test lasts: probe steps pass there,
  // the trial's steps are held.
  auto run = run_beside_foreign_step(dir.path(), "stuck.toml", "n1", 100);
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(run.output.find(fmt::format("node n1 failed ({} steps in a row there never started",
                                    kUnstartedStepsFailed)) != std::string::npos);
  const auto db = dir.path() / "runs/stuck/experiment.db";
  CHECK(test::query(db, "SELECT status, num_failures FROM trials") ==
        std::vector<std::vector<std::string>>{{"TERMINATED", "0"}});
  CHECK(iteration_counts(db, "stuck_00000") == std::vector<std::string>{"10", "10", "10"});
  // Held there that many times, then placed on n2, where it ran.
  CHECK(test::query(db,
                    "SELECT count(*) FROM trial_events WHERE to_status = 'PENDING' AND reason "
                    "LIKE '%Slurm holds its step pending%'")[0][0] ==
        std::to_string(kUnstartedStepsFailed));
  CHECK(test::query(db, "SELECT DISTINCT host FROM placements") ==
        std::vector<std::vector<std::string>>{{"n2"}});
}

TEST_CASE(
    "on Slurm, a node lost under a killed controller costs no survivor in the same allocation") {
  // Slurm slow to notice (20 s): the resumed controller meets Slurm's hold
  // before Slurm takes the dead node out of the job.
  LocalCluster cluster(test::ClusterNodes{.nodes = 3, .slurmd_timeout = 20});
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // Two ranks of a whole 2-CPU node each, SPREAD: one trial at a time on
  // two of the three nodes. One of them dies and the controller is killed
  // before Slurm notices: the trial's step, whose part on the dead node
  // never ends, stays listed with the survivor's CPUs, and Slurm holds
  // every new exclusive step there, also after it took the dead node out
  // of the job. The resumed controller, in the same allocation, must not
  // take that for the survivor's fault.
  dir.write("spread.toml", test::sweep("spread",
                                       "num_workers = 2\ncpus_per_worker = 2\n"
                                       "placement_strategy = \"SPREAD\"\n",
                                       "speed = { grid_search = [0.1, 0.2, 0.3] }\n"
                                       "iterations = 15\nsleep_s = 0.4\ncheckpoint_every = 1\n\n"
                                       "[failure]\nmax_failures = 0\n"));
  const std::string script = fmt::format(
      "'{0}' run spread.toml --storage-path runs --control-address 198.18.0.1 -q & "
      "echo \\$! > controller.pid; wait; '{0}' resume runs/spread -q",
      TUNERUN_BINARY);
  test::start_in_background(dir, LocalCluster::in_allocation("sh -c \"" + script + "\"", 3));
  const auto db = dir.path() / "runs/spread/experiment.db";
  std::string victim;
  REQUIRE(test::eventually([&] { return !(victim = trial_running_on(db, "n2")).empty(); }, 60));
  std::string survivor;
  for (const auto& row : test::query(
           db, "SELECT host FROM placements WHERE trial_id = '" + victim + "' AND host != 'n2'")) {
    survivor = row[0];
  }
  REQUIRE(!survivor.empty());
  REQUIRE(LocalCluster::cluster("crash n2").exit_code == 0);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const int controller = test::controller_pid(dir);
  REQUIRE(controller > 0);
  REQUIRE(kill(controller, SIGKILL) == 0);
  const int code = test::exit_code_within(dir, 200);
  const std::string log = test::file_text(dir.path() / "tunerun.log");
  INFO(log);
  CAPTURE(survivor);
  // The resume ends in the same allocation, every trial finished on the
  // two nodes left.
  CHECK(code == 0);
  CHECK(test::query(db, "SELECT count(*) FROM trials WHERE status = 'TERMINATED'")[0][0] == "3");
  CHECK(test::query(db, "SELECT sum(num_failures) FROM trials")[0][0] == "0");
  for (const auto& row : test::query(db, "SELECT trial_id FROM trials")) {
    CHECK(iteration_counts(db, row[0]) == std::vector<std::string>{"15", "15", "15"});
  }
  // The survivor is not charged for the steps Slurm held there.
  CHECK(recorded_node(db, survivor) == std::vector<std::string>{"0", "usable"});
  CHECK(log.find("node " + survivor + " failed") == std::string::npos);
}
