// On the local SSH cluster: a host lost under a running trial (its sshd,
// sessions and ranks killed at once, as a machine that dies), a host cut off
// the network (it lives on, unreachable), and an elastic group that shrinks
// when a host is lost and grows back when it returns.
#include <doctest/doctest.h>

#include "local_cluster.h"

using namespace tune;
using test::LocalSshCluster;

namespace {

// A trial with a rank on `host` and at least 3 results; empty while none.
std::string trial_running_on(const std::filesystem::path& db, const std::string& host) {
  if (!test::has_table(db, "placements") || !test::has_table(db, "results")) return "";
  auto rows = test::query(db, "SELECT p.trial_id FROM placements p WHERE p.host = '" + host +
                                  "' AND (SELECT count(*) FROM results r WHERE r.trial_id = "
                                  "p.trial_id) >= 3");
  return rows.empty() ? "" : rows[0][0];
}

}  // namespace

TEST_CASE("over SSH, a trial whose host is lost restarts from its checkpoint on another host") {
  LocalSshCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // A rank takes a whole host: three trials fill the three hosts.
  dir.write("loss.toml", test::ssh_sweep("loss", "cpus_per_worker = 2\n",
                                         "speed = { grid_search = [0.1, 0.2, 0.3] }\n"
                                         "iterations = 30\nsleep_s = 0.25\ncheckpoint_every = 1\n"
                                         "\n[failure]\nmax_failures = 0\n"));
  test::start_tunerun(dir.path(), "loss.toml");
  const auto db = dir.path() / "runs/loss/experiment.db";
  std::string victim;
  REQUIRE(test::eventually([&] { return !(victim = trial_running_on(db, "h2")).empty(); }, 60));
  REQUIRE(LocalSshCluster::cluster("crash 2").exit_code == 0);
  const int code = test::await_tunerun(dir.path(), 120);
  const std::string log = test::read_text(dir.path() / "tunerun.log");
  INFO(log);
  REQUIRE(code == 0);
  CHECK(log.find("host h2 was lost (ssh lost its connection") != std::string::npos);
  // Every trial TERMINATED, none charged a failure (max_failures = 0), every
  // iteration recorded once.
  CHECK(test::query(db,
                    "SELECT count(*) FROM trials WHERE status = 'TERMINATED' AND "
                    "num_failures = 0")[0][0] == "3");
  CHECK(test::query(db,
                    "SELECT count(*), count(DISTINCT trial_id || '/' || training_iteration) "
                    "FROM results") == std::vector<std::vector<std::string>>{{"90", "90"}});
  // The victim's first attempt ran on h2, the next elsewhere from a checkpoint.
  auto placed = test::query(
      db, "SELECT attempt, host FROM placements WHERE trial_id = '" + victim + "' ORDER BY id");
  REQUIRE(placed.size() >= 2);
  CHECK(placed.front() == std::vector<std::string>{"0", "h2"});
  CHECK(placed.back()[1] != "h2");
  auto resumed = test::query(db, "SELECT reason FROM trial_events WHERE trial_id = '" + victim +
                                     "' AND reason LIKE 'resumed from checkpoint %'");
  REQUIRE(!resumed.empty());
  CHECK(resumed.back()[0] != "resumed from checkpoint 0");
  // `tunerun status` shows the lost host.
  auto status = test::run_tunerun("status runs/loss", dir.path());
  INFO(status.output);
  CHECK(status.output.find("\nh2 ") != std::string::npos);
  CHECK((status.output.find("unreachable") != std::string::npos ||
         status.output.find("failed once") != std::string::npos));
  // No rank of the run is left on the hosts that stayed.
  for (int host : {1, 3}) {
    CAPTURE(host);
    CHECK(test::eventually([&] { return test::leftovers_on(host).empty(); }, 10));
  }
}

TEST_CASE("over SSH, a host cut off the network is lost, and its ranks end there too") {
  LocalSshCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("cut.toml", test::ssh_sweep("cut", "cpus_per_worker = 2\n",
                                        "speed = { grid_search = [0.1, 0.2] }\n"
                                        "iterations = 40\nsleep_s = 0.25\ncheckpoint_every = 1\n"
                                        "\n[failure]\nmax_failures = 0\n"));
  test::start_tunerun(dir.path(), "cut.toml");
  const auto db = dir.path() / "runs/cut/experiment.db";
  std::string victim;
  REQUIRE(test::eventually([&] { return !(victim = trial_running_on(db, "h2")).empty(); }, 60));
  REQUIRE(LocalSshCluster::cluster("cut 2").exit_code == 0);
  // The controller sees the loss (ssh's keepalives), and h2's sshd the
  // controller's (its ClientAliveInterval): the session ends there and the
  // rank with it, while h2 is still cut off.
  REQUIRE(test::eventually(
      [&] {
        return test::read_text(dir.path() / "tunerun.log").find("host h2 was lost") !=
               std::string::npos;
      },
      30));
  CHECK(test::eventually([&] { return test::leftovers_on(2).empty(); }, 30));
  INFO(fmt::format("{}", fmt::join(test::leftovers_on(2), "\n")));
  REQUIRE(LocalSshCluster::cluster("heal 2").exit_code == 0);
  const int code = test::await_tunerun(dir.path(), 120);
  const std::string log = test::read_text(dir.path() / "tunerun.log");
  INFO(log);
  REQUIRE(code == 0);
  CHECK(test::query(db,
                    "SELECT count(*) FROM trials WHERE status = 'TERMINATED' AND "
                    "num_failures = 0")[0][0] == "2");
  CHECK(test::query(db,
                    "SELECT count(*), count(DISTINCT trial_id || '/' || training_iteration) "
                    "FROM results") == std::vector<std::vector<std::string>>{{"80", "80"}});
}

TEST_CASE("over SSH, an elastic group shrinks when a host is lost and grows back when it returns") {
  LocalSshCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // One rank a host; two are enough to go on. A lost host is tried again every second.
  dir.write("elastic.toml",
            test::ssh_sweep("elastic", "num_workers = [2, 3]\ncpus_per_worker = 2\n",
                            "speed = 0.1\niterations = 70\nsleep_s = 0.3\ncheckpoint_every = 1\n"
                            "\n[failure]\nmax_failures = 0\n",
                            "ssh_retry_s = 1\n"));
  test::start_tunerun(dir.path(), "elastic.toml");
  const auto db = dir.path() / "runs/elastic/experiment.db";
  auto sizes = [&] {
    std::vector<std::string> out;
    if (!test::has_table(db, "results")) return out;
    for (const auto& row : test::query(db,
                                       "SELECT json_extract(metrics, '$.world_size') FROM results "
                                       "ORDER BY training_iteration")) {
      out.push_back(row[0]);
    }
    return out;
  };
  REQUIRE(test::eventually([&] { return sizes().size() >= 3; }, 60));
  REQUIRE(LocalSshCluster::cluster("crash 2").exit_code == 0);
  // It goes on with two ranks...
  REQUIRE(test::eventually([&] { return sizes().back() == "2"; }, 60));
  // ...and with three again once h2 is back.
  REQUIRE(LocalSshCluster::cluster("revive 2").exit_code == 0);
  const int code = test::await_tunerun(dir.path(), 120);
  const std::string log = test::read_text(dir.path() / "tunerun.log");
  INFO(log);
  REQUIRE(code == 0);
  const auto all = sizes();
  REQUIRE(all.size() == 70);  // every iteration once, across the shrink and the growth
  CHECK(all.front() == "3");
  CHECK(std::find(all.begin(), all.end(), "2") != all.end());
  CHECK(all.back() == "3");
  CHECK(test::query(db, "SELECT status, num_failures FROM trials") ==
        std::vector<std::vector<std::string>>{{"TERMINATED", "0"}});
  CHECK(log.find("host h2 was lost") != std::string::npos);
  CHECK(log.find("host h2 is back") != std::string::npos);
  // The last attempt ran on all three hosts again.
  CHECK(test::query(db,
                    "SELECT count(DISTINCT host) FROM placements WHERE attempt = "
                    "(SELECT max(attempt) FROM placements)")[0][0] == "3");
}

TEST_CASE("over SSH, a host lost twice is retired: not used again in the run, said in status") {
  LocalSshCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // A rank takes a whole host; more trials than hosts, so that one waits
  // for h2 once it is back. ssh_retire_after is 2 unless set.
  dir.write("retire.toml",
            test::ssh_sweep("retire", "cpus_per_worker = 2\n",
                            "speed = { grid_search = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6] }\n"
                            "iterations = 40\nsleep_s = 0.25\ncheckpoint_every = 1\n"
                            "\n[failure]\nmax_failures = 0\n",
                            "ssh_retry_s = 1\n"));
  test::start_tunerun(dir.path(), "retire.toml");
  const auto db = dir.path() / "runs/retire/experiment.db";
  auto log = [&] { return test::read_text(dir.path() / "tunerun.log"); };
  auto logged = [&](const std::string& text) { return log().find(text) != std::string::npos; };
  // Results of a rank on h2 since placement `after` (its id).
  auto placed_on_h2_after = [&](int after) {
    if (!test::has_table(db, "placements")) return -1;
    auto rows = test::query(
        db, fmt::format("SELECT max(id) FROM placements WHERE host = 'h2' AND id > {}", after));
    return rows[0][0] == "NULL" ? -1 : std::stoi(rows[0][0]);
  };
  int first = -1;
  REQUIRE(test::eventually([&] { return (first = placed_on_h2_after(0)) > 0; }, 60));
  REQUIRE(test::eventually([&] { return !trial_running_on(db, "h2").empty(); }, 60));
  REQUIRE(LocalSshCluster::cluster("crash 2").exit_code == 0);
  REQUIRE(test::eventually([&] { return logged("host h2 was lost ("); }, 30));
  REQUIRE(LocalSshCluster::cluster("revive 2").exit_code == 0);
  REQUIRE(test::eventually([&] { return logged("host h2 is back"); }, 30));
  // A trial goes there again; then h2 is lost a second time.
  int second = -1;
  REQUIRE(test::eventually([&] { return (second = placed_on_h2_after(first)) > 0; }, 60));
  REQUIRE(LocalSshCluster::cluster("crash 2").exit_code == 0);
  REQUIRE(test::eventually([&] { return logged("host h2 was lost 2 times"); }, 30));
  REQUIRE(LocalSshCluster::cluster("revive 2").exit_code == 0);
  const int code = test::await_tunerun(dir.path(), 150);
  INFO(log());
  REQUIRE(code == 0);
  CHECK(logged("it is not used again in this run"));
  // Nothing went to h2 after its second loss, and every trial finished.
  CHECK(placed_on_h2_after(second) == -1);
  CHECK(test::query(db,
                    "SELECT count(*) FROM trials WHERE status = 'TERMINATED' AND "
                    "num_failures = 0")[0][0] == "6");
  auto status = test::run_tunerun("status runs/retire", dir.path());
  INFO(status.output);
  const size_t at = status.output.find("\nh2 ");
  REQUIRE(at != std::string::npos);
  CHECK(status.output.substr(at, status.output.find('\n', at + 1) - at).find("retired") !=
        std::string::npos);
}
