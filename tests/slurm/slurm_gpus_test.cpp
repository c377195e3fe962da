// GPUs lent through Slurm, on the local cluster with stand-in GPUs
// (local_cluster.sh: gres.conf names device files nothing opens). What a
// rank holds is what Slurm wrote into its CUDA_VISIBLE_DEVICES: each rank of
// the test trainable writes it down with its host and the span it ran.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "../tune/sqlite_query.h"
#include "local_cluster.h"

using namespace tune;
using test::ClusterNodes;
using test::LocalCluster;

namespace {

// Each rank: its host, CUDA_VISIBLE_DEVICES ("cvd=0,1"; "cvd=unset" without one) and the
// span it held them, in rank_R.gpu of its trial's directory; then a result.
constexpr const char* kGpuRank = R"sh(start=$(date +%s.%N)
sleep "${HOLD_S:-0}"
echo "$(hostname) cvd=${CUDA_VISIBLE_DEVICES-unset} $start $(date +%s.%N)" >"$TUNERUN_TRIAL_DIR/rank_$RANK.gpu"
echo '@tunerun {"x": 1}'
)sh";

std::string gpu_sweep(const std::string& name, const std::string& resources, int trials) {
  std::string grid;
  for (int k = 0; k < trials; ++k) grid += fmt::format("{}{}", k == 0 ? "" : ", ", k);
  return fmt::format(
      "name = \"{}\"\n[trainable]\ncommand = [\"sh\", \"gpu_rank.sh\"]\n{}\n"
      "[param_space]\nk = {{ grid_search = [{}] }}\n",
      name, resources, grid);
}

struct RankView {
  std::string trial, host, devices;  // devices: "0,1", "" or "unset"
  double start = 0, end = 0;
};

// What every rank of the experiment in `experiment_dir` wrote.
std::vector<RankView> rank_views(const std::filesystem::path& experiment_dir) {
  std::vector<RankView> views;
  for (const auto& trial : std::filesystem::directory_iterator(experiment_dir / "trials")) {
    for (const auto& file : std::filesystem::directory_iterator(trial.path())) {
      if (file.path().extension() != ".gpu") continue;
      std::ifstream in(file.path());
      RankView v{trial.path().filename().string()};
      in >> v.host >> v.devices >> v.start >> v.end;
      v.devices.erase(0, 4);  // "cvd="
      views.push_back(v);
    }
  }
  return views;
}

}  // namespace

TEST_CASE("on Slurm, 2-rank trials of one GPU each hold at most the 4 GPUs of 2 nodes") {
  // CPUs for 8 ranks, GPUs for 4: the GPUs decide.
  LocalCluster cluster(ClusterNodes{.cpus = 4, .gpus = 2});
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  // Each rank holds its GPU 1.5 s, the span checked below: the trainable's work, not a wait.
  dir.write("gpu_rank.sh", std::string("HOLD_S=1.5\n") + kGpuRank);
  dir.write("gpus.toml",
            gpu_sweep("gpus", "num_workers = 2\ncpus_per_worker = 1\ngpus_per_worker = 1", 6));
  auto run = cluster.tunerun_in_allocation("run gpus.toml --storage-path runs", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto experiment = dir.path() / "runs/gpus";
  const auto db = experiment / "experiment.db";
  CHECK(test::query(db, "SELECT count(*) FROM trials WHERE status = 'TERMINATED'")[0][0] == "6");

  // Each rank saw one device of its node's two, never one another rank held then.
  const auto views = rank_views(experiment);
  REQUIRE(views.size() == 12);
  std::vector<std::pair<double, int>> edges;
  for (size_t i = 0; i < views.size(); ++i) {
    const auto& a = views[i];
    INFO(a.trial << " on " << a.host << " saw CUDA_VISIBLE_DEVICES=" << a.devices);
    CHECK((a.devices == "0" || a.devices == "1"));
    for (size_t j = i + 1; j < views.size(); ++j) {
      const auto& b = views[j];
      const bool overlap = a.start < b.end && b.start < a.end;
      if (overlap && a.host == b.host) CHECK(a.devices != b.devices);
    }
    edges.emplace_back(a.start, +1);
    edges.emplace_back(a.end, -1);
  }
  std::sort(edges.begin(), edges.end());
  int running = 0, most = 0;
  for (const auto& [at, delta] : edges) most = std::max(most, running += delta);
  CHECK(most == 4);  // all four GPUs held at once: one trial on each node

  // Each trial packed onto one node, both nodes used.
  auto hosts = test::query(db,
                           "SELECT trial_id, count(DISTINCT host) FROM placements "
                           "GROUP BY trial_id");
  REQUIRE(hosts.size() == 6);
  for (const auto& row : hosts) CHECK(row[1] == "1");
  CHECK(test::query(db, "SELECT count(DISTINCT host) FROM placements")[0][0] == "2");
  // The step asked Slurm for them, and the nodes' GPUs are in the record `tunerun status` reads.
  std::ifstream srun_log(experiment / "trials/gpus_00000/srun.log");
  std::stringstream srun;
  srun << srun_log.rdbuf();
  CHECK(srun.str().find("--gpus-per-task=1") != std::string::npos);
  CHECK(test::query(db, R"(
      SELECT json_extract(n.value, '$.name'), json_extract(n.value, '$.gpus'),
             json_extract(n.value, '$.gpus_used')
      FROM experiment_state, json_each(experiment_state.value) AS n
      WHERE experiment_state.key = 'nodes')") ==
        std::vector<std::vector<std::string>>{{"n1", "2", "0"}, {"n2", "2", "0"}});
}

TEST_CASE(
    "on Slurm, a rank asking more GPUs than a node has is refused and ranks asking none see none") {
  LocalCluster cluster(ClusterNodes{.cpus = 2, .gpus = 2});
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("gpu_rank.sh", kGpuRank);
  // 3 GPUs: fewer than the allocation's 4, more than a node's 2.
  dir.write("big.toml", gpu_sweep("big", "num_workers = 1\ngpus_per_worker = 3", 1));
  auto big = cluster.tunerun_in_allocation("run big.toml --storage-path runs", dir.path());
  INFO(big.output);
  CHECK(big.exit_code != 0);
  CHECK(big.output.find("1 ranks x 1 CPUs x 3 GPUs does not fit") != std::string::npos);
  CHECK(big.output.find("n1: 2 CPUs (0 in use), 2 GPUs (0 in use), usable") != std::string::npos);
  // Refused before anything is written.
  CHECK_FALSE(std::filesystem::exists(dir.path() / "runs/big/experiment.db"));

  dir.write("none.toml", gpu_sweep("none", "num_workers = 2\ncpus_per_worker = 2", 1));
  auto none = cluster.tunerun_in_allocation("run none.toml --storage-path runs", dir.path());
  INFO(none.output);
  REQUIRE(none.exit_code == 0);
  const auto views = rank_views(dir.path() / "runs/none");
  REQUIRE(views.size() == 2);
  for (const auto& v : views) CHECK(v.devices == "");
}
