// On the local Slurm cluster: a trial's ranks over the nodes as its
// placement_strategy says (PACK, SPREAD, STRICT_SPREAD, STRICT_PACK).
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "../tune/sqlite_query.h"
#include "local_cluster.h"

using namespace tune;
using test::LocalCluster;

namespace {

std::string strategy_sweep(const std::string& name, const std::string& strategy, int ranks,
                           int cpus) {
  return test::sweep(name,
                     fmt::format("num_workers = {}\ncpus_per_worker = {}\nplacement_strategy = "
                                 "\"{}\"\n",
                                 ranks, cpus, strategy),
                     "speed = { grid_search = [0.1, 0.3] }\niterations = 3\n");
}

}  // namespace

TEST_CASE("on Slurm, SPREAD puts a trial's ranks on two nodes where PACK keeps them on one") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  for (const std::string strategy : {"PACK", "SPREAD"}) {
    CAPTURE(strategy);
    dir.write(strategy + ".toml", strategy_sweep(strategy, strategy, 2, 1));
    auto run =
        cluster.tunerun_in_allocation("run " + strategy + ".toml --storage-path runs", dir.path());
    INFO(run.output);
    REQUIRE(run.exit_code == 0);
    const auto db = dir.path() / "runs" / strategy / "experiment.db";
    CHECK(test::query(db, "SELECT count(*) FROM trials WHERE status = 'TERMINATED'")[0][0] == "2");
    const auto hosts = test::hosts_per_trial(db);
    REQUIRE(hosts.size() == 2);
    for (const auto& [trial, on] : hosts) CHECK(on.size() == (strategy == "PACK" ? 1u : 2u));
  }
}

TEST_CASE("on Slurm, a group a STRICT strategy can never place is refused with each node's state") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // Three ranks, two nodes: never a node each.
  dir.write("spread3.toml", strategy_sweep("spread3", "STRICT_SPREAD", 3, 1));
  auto spread = cluster.tunerun_in_allocation("run spread3.toml --storage-path runs", dir.path());
  INFO(spread.output);
  CHECK(spread.exit_code != 0);
  CHECK(spread.output.find("as STRICT_SPREAD: every rank on a node of its own") !=
        std::string::npos);
  CHECK(spread.output.find("n1: 2 CPUs (0 in use), 0 GPUs (0 in use), usable; n2: 2 CPUs") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "runs/spread3/experiment.db"));
  // Two ranks of 2 CPUs: never both on one 2-CPU node; STRICT_SPREAD places them.
  dir.write("pack2.toml", strategy_sweep("pack2", "STRICT_PACK", 2, 2));
  auto pack = cluster.tunerun_in_allocation("run pack2.toml --storage-path runs", dir.path());
  INFO(pack.output);
  CHECK(pack.exit_code != 0);
  CHECK(pack.output.find("as STRICT_PACK: every rank on one node") != std::string::npos);
  dir.write("spread2.toml", strategy_sweep("spread2", "STRICT_SPREAD", 2, 2));
  auto spread2 = cluster.tunerun_in_allocation("run spread2.toml --storage-path runs", dir.path());
  INFO(spread2.output);
  REQUIRE(spread2.exit_code == 0);
  for (const auto& [trial, on] : test::hosts_per_trial(dir.path() / "runs/spread2/experiment.db")) {
    CHECK(on == std::set<std::string>{"n1", "n2"});
  }
}
