// DDP across the nodes of the local Slurm cluster (local_cluster.sh): each
// node has its own network, hostname, mount namespace and /dev/shm, so ranks
// on different nodes can meet only through Gloo over TCP on 198.18.0.0/24.
// The trainable (ddp_probe.cpp) reports fingerprints of the averaged
// gradient every step; the same seeds and data in other layouts (one node,
// one rank with the whole batch) must give the same numbers.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <map>
#include <set>

#include "../tune/sqlite_query.h"
#include "local_cluster.h"

using namespace tune;
using test::LocalCluster;

namespace {

std::string probe_sweep(const std::string& name, int num_workers, int cpus_per_worker) {
  return fmt::format(R"(name = "{}"
metric = "loss"
mode = "min"

[trainable]
name = "ddp_probe"
library = "{}"
num_workers = {}
cpus_per_worker = {}

[param_space]
seed = {{ grid_search = [1, 2] }}
steps = 6
batch = 32
)",
                     name, TUNERUN_DDP_PROBE, num_workers, cpus_per_worker);
}

// (seed, iteration) -> loss, grad_sum, grad_norm, param_sum.
using Curves = std::map<std::pair<int, int>, std::array<double, 4>>;

const char* kFingerprints = R"(
    SELECT json_extract(t.config, '$.seed'), r.training_iteration,
           json_extract(r.metrics, '$.loss'), json_extract(r.metrics, '$.grad_sum'),
           json_extract(r.metrics, '$.grad_norm'), json_extract(r.metrics, '$.param_sum')
    FROM results r JOIN trials t USING (trial_id))";

Curves curves(const std::filesystem::path& db) {
  Curves out;
  for (const auto& row : test::query(db, kFingerprints)) {
    out[{std::stoi(row[0]), std::stoi(row[1])}] = {std::stod(row[2]), std::stod(row[3]),
                                                   std::stod(row[4]), std::stod(row[5])};
  }
  return out;
}

// Every fingerprint of `run` within 1e-5 (relative past 1) of the reference's.
void check_same(const Curves& run, const Curves& reference) {
  REQUIRE(run.size() == reference.size());
  for (const auto& [key, expected] : reference) {
    auto it = run.find(key);
    REQUIRE(it != run.end());
    for (size_t i = 0; i < expected.size(); ++i) {
      INFO("seed " << key.first << ", iteration " << key.second << ", fingerprint " << i);
      CHECK(std::abs(it->second[i] - expected[i]) <= 1e-5 * std::max(1.0, std::abs(expected[i])));
    }
  }
}

void check_all_terminated(const std::filesystem::path& db, size_t trials) {
  auto statuses = test::query(db, "SELECT status FROM trials");
  CHECK(statuses.size() == trials);
  for (const auto& row : statuses) CHECK(row[0] == "TERMINATED");
}

// Per trial: the hosts its ranks ran on, with the ranks on each.
std::map<std::string, std::map<std::string, int>> ranks_per_host(const std::filesystem::path& db) {
  std::map<std::string, std::map<std::string, int>> out;
  for (const auto& row : test::query(db, "SELECT trial_id, host FROM placements")) {
    ++out[row[0]][row[1]];
  }
  return out;
}

// What the trainable saw of its layout, from every result: "ddp_nodes
// shared_memory num_nodes" (the same in every row, or more than one value).
std::set<std::string> layouts(const std::filesystem::path& db) {
  std::set<std::string> out;
  for (const auto& row : test::query(db, R"(
      SELECT json_extract(metrics, '$.ddp_nodes'), json_extract(metrics, '$.ddp_shared_memory'),
             json_extract(metrics, '$.num_nodes') FROM results)")) {
    out.insert(row[0] + " " + row[1] + " " + row[2]);
  }
  return out;
}

// One rank with the whole batch, on this machine (no Slurm).
Curves single_rank_reference(const test::ScratchDir& dir) {
  dir.write("single.toml", probe_sweep("single", 1, 1));
  auto run = test::run_shell("cd '" + dir.path().string() + "' && '" + TUNERUN_BINARY +
                             "' run single.toml --storage-path runs --launcher local -q");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto db = dir.path() / "runs/single/experiment.db";
  check_all_terminated(db, 2);
  return curves(db);
}

}  // namespace

TEST_CASE("on Slurm, 2-rank DDP over two nodes computes the gradients of one node's two ranks") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  const Curves reference = single_rank_reference(dir);
  REQUIRE(reference.size() == 12);  // 2 seeds x 6 steps

  // One rank per node (each takes a node's 2 CPUs), then both on one node.
  dir.write("spread.toml", probe_sweep("spread", 2, 2));
  dir.write("packed.toml", probe_sweep("packed", 2, 1));
  for (const char* name : {"spread", "packed"}) {
    auto run = cluster.tunerun_in_allocation(fmt::format("run {}.toml --storage-path runs", name),
                                             dir.path());
    INFO(run.output);
    REQUIRE(run.exit_code == 0);
  }
  const auto spread = dir.path() / "runs/spread/experiment.db";
  const auto packed = dir.path() / "runs/packed/experiment.db";
  check_all_terminated(spread, 2);
  check_all_terminated(packed, 2);
  for (const auto& [trial, hosts] : ranks_per_host(spread)) {
    INFO(trial);
    CHECK(hosts == std::map<std::string, int>{{"n1", 1}, {"n2", 1}});
  }
  for (const auto& [trial, hosts] : ranks_per_host(packed)) {
    INFO(trial);
    CHECK(hosts.size() == 1);
    CHECK(hosts.begin()->second == 2);
  }
  // Across nodes: Gloo, bucketed; on one node: shared memory.
  CHECK(layouts(spread) == std::set<std::string>{"2 0 2"});
  CHECK(layouts(packed) == std::set<std::string>{"1 1 1"});
  check_same(curves(spread), reference);
  check_same(curves(packed), reference);
}

TEST_CASE("on Slurm, 4-rank DDP over two nodes x two ranks averages hierarchically") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  const Curves reference = single_rank_reference(dir);
  dir.write("grid.toml", probe_sweep("grid", 4, 1));
  auto run = cluster.tunerun_in_allocation("run grid.toml --storage-path runs", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto db = dir.path() / "runs/grid/experiment.db";
  check_all_terminated(db, 2);
  for (const auto& [trial, hosts] : ranks_per_host(db)) {
    INFO(trial);
    CHECK(hosts == std::map<std::string, int>{{"n1", 2}, {"n2", 2}});
  }
  // Shared memory on each node, Gloo between the nodes' leaders.
  CHECK(layouts(db) == std::set<std::string>{"2 1 2"});
  check_same(curves(db), reference);
}
