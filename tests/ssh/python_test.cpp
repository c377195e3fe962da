// On the local SSH cluster: a Python Tuner over a two-rank TorchTrainer whose
// RunConfig names the SSH launcher, its hostfile and ssh_config
// (train.ClusterConfig, the sweep file's [cluster] keys), runs every trial's
// ranks on two of the hostfile's hosts.
#include <doctest/doctest.h>

#include <set>

#include "local_cluster.h"

using namespace tune;
using test::LocalSshCluster;

#ifdef TUNERUN_PYTHON_PATH
namespace {

// Two trials of two-rank DDP (Gloo across the hosts), STRICT_SPREAD: each
// rank on a host of its own. The ranks report the host they ran on, as
// the host names it (each namespace has its own), gathered over the group.
constexpr const char* kTunerScript = R"(import socket, sys
import torch
import torch.distributed as dist
from tunerun import train, tune
from tunerun.train import ClusterConfig, RunConfig, ScalingConfig
from tunerun.train.torch import TorchTrainer, prepare_model

def train_func(config):
    torch.manual_seed(0)
    model = prepare_model(torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=config["lr"])
    hosts = [None] * dist.get_world_size()
    dist.all_gather_object(hosts, socket.gethostname())
    for step in range(3):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        train.report({"loss": loss.item(), "hosts": ",".join(sorted(hosts))})

storage, hostfile, ssh_config, address = sys.argv[1:5]
trainer = TorchTrainer(
    train_func, scaling_config=ScalingConfig(num_workers=2, placement_strategy="STRICT_SPREAD"))
tuner = tune.Tuner(
    trainer, param_space={"train_loop_config": {"lr": tune.grid_search([0.1, 0.2])}},
    tune_config=tune.TuneConfig(metric="loss", mode="min"),
    run_config=RunConfig(name="py_ssh", storage_path=storage, verbose=0, cluster=ClusterConfig(
        launcher="ssh", hostfile=hostfile, ssh_config=ssh_config, control_address=address)))
results = tuner.fit()
for result in results:
    print("trial", result.metrics["trial_id"], "hosts", result.metrics["hosts"],
          "error", result.error)
)";

// The first line `local_cluster.sh what` prints.
std::string cluster_path(const char* what) {
  const std::string out = LocalSshCluster::cluster(what).output;
  return out.substr(0, out.find('\n'));
}

}  // namespace

TEST_CASE("over SSH, a Python Tuner's two-rank TorchTrainer runs each trial on two hosts") {
  if (test::run_shell("/usr/bin/python3 -c 'import torch'").exit_code != 0) {
    MESSAGE("skipped: Debian's python3-torch is not installed");
    return;
  }
  LocalSshCluster cluster(3);
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  dir.write("tuner.py", kTunerScript);
  auto run = test::run_shell(
      fmt::format("cd '{}' && env PYTHONPATH='{}' /usr/bin/python3 tuner.py '{}' '{}' '{}' {} 2>&1",
                  dir.path().string(), TUNERUN_PYTHON_PATH, (dir.path() / "runs").string(),
                  cluster_path("hostfile"), cluster_path("ssh_config"), test::kSshControlAddress));
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto db = dir.path() / "runs/py_ssh/experiment.db";
  CHECK(test::query(db, "SELECT count(*), sum(status = 'TERMINATED') FROM trials")[0] ==
        std::vector<std::string>{"2", "2"});
  // Where the controller placed the ranks: two distinct hosts of the hostfile.
  std::map<std::string, std::set<std::string>> placed;
  for (const auto& row : test::query(db, "SELECT trial_id, host FROM placements")) {
    placed[row[0]].insert(row[1]);
  }
  REQUIRE(placed.size() == 2);
  const std::set<std::string> hosts{"h1", "h2", "h3"};
  for (const auto& [trial, on] : placed) {
    CAPTURE(trial);
    CHECK(on.size() == 2);
    for (const auto& host : on) CHECK(hosts.count(host) == 1);
    // And where the ranks say they ran: the same hosts.
    const std::string line = "trial " + trial + " hosts " + fmt::format("{}", fmt::join(on, ","));
    CHECK(run.output.find(line + " error None") != std::string::npos);
  }
  // Nothing of the run is left on any host.
  for (int host = 1; host <= 3; ++host) {
    CHECK(test::eventually([&] { return test::leftovers_on(host).empty(); }, 10));
  }
}
#endif
