// tunerun inside a Slurm allocation on a real (local) Slurm cluster:
// tests/slurm/local_cluster.sh brings up slurmctld and two slurmd "hosts",
// each in its own network, hostname and mount namespace, for each test case
// and tears it down after, pass or fail. Where this machine cannot (not
// root, no namespaces, Slurm not installed) the cases say why and pass.
// Everything is checked through the experiment database.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "../tune/sqlite_query.h"
#include "../tune/test_util.h"
#include "core/errors.h"
#include "tune/slurm_launcher.h"

using namespace tune;

namespace {

const std::string kCluster = std::string(TUNERUN_SOURCE_DIR) + "/tests/slurm/local_cluster.sh";

// Up for the object's lifetime; down at its end, even when a check failed.
class LocalCluster {
 public:
  LocalCluster() {
    auto probe = test::run_shell("'" + kCluster + "' can_run");
    if (probe.exit_code != 0) {
      skip_reason_ = probe.output;
      return;
    }
    auto up = test::run_shell("'" + kCluster + "' up");
    INFO(up.output);
    REQUIRE(up.exit_code == 0);
    up_ = true;
  }
  ~LocalCluster() {
    if (up_) test::run_shell("'" + kCluster + "' down");
  }
  bool skipped() const {
    if (!up_) MESSAGE("skipped: no local Slurm cluster on this machine: " << skip_reason_);
    return !up_;
  }
  // Runs `tunerun ARGS` inside a 2-node allocation holding every CPU of both nodes.
  test::CommandResult tunerun_in_allocation(const std::string& args,
                                            const std::filesystem::path& cwd) const {
    return test::run_shell("cd '" + cwd.string() + "' && '" + kCluster +
                           "' run salloc --nodes=2 --exclusive --quiet '" +
                           std::string(TUNERUN_BINARY) + "' " + args +
                           " --control-address 198.18.0.1 -q");
  }

 private:
  bool up_ = false;
  std::string skip_reason_;
};

std::string sweep(const std::string& name, const std::string& trainable,
                  const std::string& params) {
  return "name = \"" + name + "\"\nmetric = \"accuracy\"\nmode = \"max\"\n\n[trainable]\n" +
         "builtin = \"learning_curve\"\n" + trainable + "\n[param_space]\n" + params + "\n";
}

}  // namespace

TEST_CASE("allocation CPUs per node are read as Slurm writes them") {
  CHECK(parse_cpus_per_node("2(x3),1") == std::vector<int>{2, 2, 2, 1});
  CHECK(parse_cpus_per_node("4") == std::vector<int>{4});
  CHECK_THROWS_WITH_AS(parse_cpus_per_node("2(x"), doctest::Contains("'2(x'"), ConfigError);
  CHECK_THROWS_AS(parse_cpus_per_node(""), ConfigError);
}

TEST_CASE("a group is packed onto as few nodes as fit, spread only when it must") {
  std::vector<SlurmNode> nodes{{"n1", 4, 3}, {"n2", 4, 0}, {"n3", 2, 0}};
  CHECK(place_ranks(nodes, 2, 1) == std::vector<int>{2, 2});  // the fullest node that holds both
  CHECK(place_ranks(nodes, 4, 1) == std::vector<int>{1, 1, 1, 1});
  CHECK(place_ranks(nodes, 3, 2) == std::vector<int>{1, 1, 2});  // no node holds 6 CPUs
  CHECK(place_ranks(nodes, 4, 2).empty());                       // 7 free, but not in pairs
}

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

namespace {

// Pids of processes whose environment holds `needle` (e.g. a trial id
// prefix), and `also` when given.
std::vector<int> processes_with_env(const std::string& needle, const std::string& also = "") {
  std::vector<int> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (env.find(needle) != std::string::npos && env.find(also) != std::string::npos) {
      pids.push_back(std::stoi(name));
    }
  }
  return pids;
}

template <class F>
bool eventually(F condition, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return condition();
}

}  // namespace

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
  test::run_shell("cd '" + dir.path().string() + "' && '" + kCluster +
                  "' run salloc --nodes=2 --exclusive --quiet sh -c '" + script +
                  "' >salloc.log 2>&1 &");
  const auto db = dir.path() / "runs/orphans/experiment.db";
  // Four tasks of job steps (srun holds the trial's variables too, not SLURM_STEP_ID).
  auto tasks = [] { return processes_with_env("TUNERUN_TRIAL_ID=orphans_", "SLURM_STEP_ID="); };
  REQUIRE(eventually([&] { return tasks().size() == 4; }, 30));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a few checkpoints
  std::ifstream pid_file(dir.path() / "controller.pid");
  int controller = 0;
  pid_file >> controller;
  REQUIRE(controller > 0);
  REQUIRE(kill(controller, SIGKILL) == 0);
  CHECK(eventually([&] { return processes_with_env("TUNERUN_TRIAL_ID=orphans_").empty(); }, 10));
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
