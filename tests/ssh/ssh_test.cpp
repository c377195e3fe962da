// On the local SSH cluster (local_cluster.sh): sweeps whose ranks run on the
// hostfile's hosts over ssh, placed as their strategy asks, and the CURVE
// keys that reach the ranks over the session alone.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>
#include <set>

#include "local_cluster.h"

using namespace tune;
using test::LocalSshCluster;

namespace {

// The distinct hosts of each trial's ranks, from the placements table.
std::map<std::string, std::set<std::string>> hosts_per_trial(const std::filesystem::path& db) {
  std::map<std::string, std::set<std::string>> hosts;
  for (const auto& row : test::query(db, "SELECT trial_id, host FROM placements")) {
    hosts[row[0]].insert(row[1]);
  }
  return hosts;
}

// The line of `tunerun status`'s host table that starts with `host`.
std::string status_line(const std::string& output, const std::string& host) {
  const size_t at = output.find("\n" + host + " ");
  if (at == std::string::npos) return "";
  return output.substr(at + 1, output.find('\n', at + 1) - at - 1);
}

}  // namespace

TEST_CASE("over SSH, each group's ranks run on the hostfile's hosts as its strategy asks") {
  LocalSshCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // Three hosts of 2 CPUs: SPREAD puts a 3-rank group's ranks on three
  // hosts, STRICT_PACK a 2-rank group's on one.
  dir.write("spread.toml",
            test::ssh_sweep("spread", "num_workers = 3\nplacement_strategy = \"SPREAD\"\n",
                            "speed = { grid_search = [0.1, 0.2] }\n"
                            "iterations = 4\nsleep_s = 0.1\ncheckpoint_every = 2\n"));
  dir.write("pack.toml",
            test::ssh_sweep("pack", "num_workers = 2\nplacement_strategy = \"STRICT_PACK\"\n",
                            "speed = { grid_search = [0.1, 0.2, 0.3] }\n"
                            "iterations = 4\nsleep_s = 0.1\n"));
  for (const std::string name : {"spread", "pack"}) {
    CAPTURE(name);
    auto run = test::run_tunerun("run " + name + ".toml --storage-path runs -q", dir.path());
    INFO(run.output);
    REQUIRE(run.exit_code == 0);
    const auto db = dir.path() / "runs" / name / "experiment.db";
    const auto trials = test::query(db, "SELECT count(*) FROM trials WHERE status = 'TERMINATED'");
    CHECK(trials[0][0] == (name == "spread" ? "2" : "3"));
    for (const auto& [trial, hosts] : hosts_per_trial(db)) {
      CAPTURE(trial);
      CHECK(hosts.size() == (name == "spread" ? 3u : 1u));
      for (const auto& host : hosts) CHECK(std::set<std::string>{"h1", "h2", "h3"}.count(host));
    }
    // Every iteration once per trial.
    CHECK(test::query(db,
                      "SELECT count(*) = count(DISTINCT trial_id || '/' || "
                      "training_iteration) FROM results")[0][0] == "1");
  }
  // `tunerun status` lists the hosts, sound, none of their CPUs held now.
  auto status = test::run_tunerun("status runs/spread", dir.path());
  INFO(status.output);
  for (const std::string host : {"h1", "h2", "h3"}) {
    CAPTURE(host);
    CHECK(status_line(status.output, host).find("0/2") != std::string::npos);
    CHECK(status_line(status.output, host).find("usable") != std::string::npos);
  }
  // Nothing of the runs is left on any host.
  for (int host = 1; host <= 3; ++host) {
    CHECK(test::eventually([&] { return test::leftovers_on(host).empty(); }, 10));
    INFO(fmt::format("{}", fmt::join(test::leftovers_on(host), "\n")));
  }
}

TEST_CASE(
    "over SSH, a rank's CURVE secret is on no command line nor environment, "
    "and its file on the host is private and removed") {
  LocalSshCluster cluster(1);
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("keys.toml",
            test::ssh_sweep("keys", "", "speed = 0.1\niterations = 40\nsleep_s = 0.1\n"));
  test::start_tunerun(dir.path(), "keys.toml");
  // The rank, once it reports: its environment names its key file on the host.
  std::vector<int> ranks;
  const auto db = dir.path() / "runs/keys/experiment.db";
  REQUIRE(test::eventually(
      [&] {
        if (!test::has_table(db, "results") ||
            test::query(db, "SELECT count(*) FROM results")[0][0] == "0") {
          return false;
        }
        ranks = test::processes_with_env("TUNERUN_TRIAL_ID=keys_00000", "TUNERUN_NODE_NAME=h1");
        return !ranks.empty();
      },
      60));
  std::ifstream environ_file(fmt::format("/proc/{}/environ", ranks.front()), std::ios::binary);
  std::string environ_text((std::istreambuf_iterator<char>(environ_file)), {});
  const std::string marker = "TUNERUN_CURVE_KEY_FILE=";
  const size_t at = environ_text.find(marker);
  REQUIRE(at != std::string::npos);
  const std::filesystem::path key_file(
      environ_text.substr(at + marker.size(), environ_text.find('\0', at) - at - marker.size()));
  INFO(key_file.string());
  struct stat file {
  }, folder{};
  REQUIRE(stat(key_file.c_str(), &file) == 0);
  REQUIRE(stat(key_file.parent_path().c_str(), &folder) == 0);
  CHECK((file.st_mode & 0777) == 0600);
  CHECK((folder.st_mode & 0777) == 0700);
  // Its secret (the second line) is the controller's issue, and appears in
  // no process's command line or environment.
  std::ifstream key_in(key_file);
  std::string public_key, secret;
  std::getline(key_in, public_key);
  std::getline(key_in, secret);
  REQUIRE(secret.size() == 40);
  std::vector<std::string> holders;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    for (const char* what : {"cmdline", "environ"}) {
      std::ifstream in(entry.path() / what, std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(in)), {});
      if (text.find(secret) != std::string::npos) holders.push_back(pid + "/" + what);
    }
  }
  CHECK(holders.empty());
  CHECK(test::await_tunerun(dir.path(), 60) == 0);
  INFO(test::read_text(dir.path() / "tunerun.log"));
  CHECK(test::eventually([&] { return !std::filesystem::exists(key_file.parent_path()); }, 10));
}

TEST_CASE(
    "over SSH, a run stops before any trial when a host does not share the experiment "
    "directory, naming the host") {
  LocalSshCluster cluster(2);
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("blind.toml", test::ssh_sweep("blind", "", "speed = 0.1\niterations = 3\n"));
  std::filesystem::create_directories(dir.path() / "runs");
  // On h2 the runs folder is a filesystem of its own: what the controller writes there is not seen.
  auto mount = LocalSshCluster::cluster("exec 2 mount -t tmpfs tmpfs '" +
                                        (dir.path() / "runs").string() + "'");
  INFO(mount.output);
  REQUIRE(mount.exit_code == 0);
  auto run = test::run_tunerun("run blind.toml --storage-path runs -q", dir.path());
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("not shared with host(s) h2") != std::string::npos);
  CHECK(!std::filesystem::exists(dir.path() / "runs/blind/experiment.db"));
}
