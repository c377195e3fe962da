// GPUs lent by the SSH launcher, on the local SSH cluster with stand-in GPUs
// in its hostfile (gpus=2: nothing behind them). Each rank of the test
// trainable writes down its host, CUDA_VISIBLE_DEVICES and the span it ran.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>

#include "local_cluster.h"

using namespace tune;
using test::LocalSshCluster;

namespace {

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
      "[param_space]\nk = {{ grid_search = [{}] }}\n{}",
      name, resources, grid, LocalSshCluster::cluster_table());
}

struct RankView {
  std::string trial, host, devices;  // devices: "0,1", "" or "unset"
  double start = 0, end = 0;
};

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

TEST_CASE(
    "over SSH, each rank gets GPUs of its own host by index, and ranks asking none see none") {
  LocalSshCluster cluster(2, 4, 2);  // CPUs for 8 ranks, GPUs for 4: the GPUs decide
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("gpu_rank.sh", std::string("HOLD_S=1.5\n") + kGpuRank);
  dir.write("gpus.toml",
            gpu_sweep("gpus", "num_workers = 2\ncpus_per_worker = 1\ngpus_per_worker = 1", 6));
  auto run = test::run_tunerun("run gpus.toml --storage-path runs -q", dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto views = rank_views(dir.path() / "runs/gpus");
  REQUIRE(views.size() == 12);
  std::vector<std::pair<double, int>> edges;
  for (size_t i = 0; i < views.size(); ++i) {
    const auto& a = views[i];
    INFO(a.trial << " on " << a.host << " saw CUDA_VISIBLE_DEVICES=" << a.devices);
    CHECK((a.devices == "0" || a.devices == "1"));
    for (size_t j = i + 1; j < views.size(); ++j) {
      const auto& b = views[j];
      if (a.start < b.end && b.start < a.end && a.host == b.host) CHECK(a.devices != b.devices);
    }
    edges.emplace_back(a.start, +1);
    edges.emplace_back(a.end, -1);
  }
  std::sort(edges.begin(), edges.end());
  int running = 0, most = 0;
  for (const auto& [at, delta] : edges) most = std::max(most, running += delta);
  CHECK(most == 4);  // all four GPUs held at once

  dir.write("none.toml", gpu_sweep("none", "num_workers = 2\ncpus_per_worker = 1", 1));
  auto none = test::run_tunerun("run none.toml --storage-path runs -q", dir.path());
  INFO(none.output);
  REQUIRE(none.exit_code == 0);
  for (const auto& view : rank_views(dir.path() / "runs/none")) CHECK(view.devices == "");
}
