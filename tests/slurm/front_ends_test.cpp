// On the local Slurm cluster: every front end chooses its launcher the same
// way (tune/launch/make_launcher.h). Inside an allocation a C++ tune::Tuner
// and a Python TorchTrainer, whose code never names Slurm, run each trial's
// ranks as job steps over the allocation's nodes.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "../tune/sqlite_query.h"
#include "local_cluster.h"

using namespace tune;
using test::LocalCluster;

namespace {

// `command` run from `cwd` inside a 2-node allocation of the local cluster.
test::CommandResult in_allocation(const std::string& command, const std::filesystem::path& cwd) {
  return test::run_shell("cd '" + cwd.string() + "' && " +
                         LocalCluster::in_allocation(command));
}

// Two-rank DDP over torch.distributed (Gloo across the nodes), as Ray
// Train's examples write it: the launcher comes from tunerun.init's cluster
// settings alone.
constexpr const char* kTorchTrainerScript = R"(import sys
import torch
import tunerun
from tunerun import train
from tunerun.train import RunConfig, ScalingConfig
from tunerun.train.torch import TorchTrainer, prepare_model

def train_func(config):
    torch.manual_seed(0)
    model = prepare_model(torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=config["lr"])
    for step in range(3):
        x = torch.randn(8, 4)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        train.report({"loss": loss.item(), "world_size": train.get_context().get_world_size()})

tunerun.init(control_address="198.18.0.1")
trainer = TorchTrainer(
    train_func, train_loop_config={"lr": 0.1},
    scaling_config=ScalingConfig(num_workers=2, placement_strategy="STRICT_SPREAD"),
    run_config=RunConfig(name="py_trainer", storage_path=sys.argv[1], verbose=0))
result = trainer.fit()
print("world size", result.metrics["world_size"])
)";

}  // namespace

TEST_CASE("inside an allocation a C++ Tuner runs its trials' ranks on two nodes") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  test::ScratchDir dir;
  auto run = in_allocation(
      "'" + std::string(TUNERUN_TUNER_PROGRAM) + "' '" + (dir.path() / "runs").string() +
          "' 198.18.0.1",
      dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(run.output.find("2 trials, 2 terminated") != std::string::npos);
  const auto hosts = test::hosts_per_trial(dir.path() / "runs/cpp_tuner/experiment.db");
  REQUIRE(hosts.size() == 2);
  for (const auto& [trial, on] : hosts) CHECK(on == std::set<std::string>{"n1", "n2"});
}

#ifdef TUNERUN_PYTHON_PATH
TEST_CASE("inside an allocation a Python TorchTrainer runs its ranks on two nodes") {
  LocalCluster cluster;
  if (cluster.skipped()) return;
  if (test::run_shell("/usr/bin/python3 -c 'import torch'").exit_code != 0) {
    MESSAGE("skipped: Debian's python3-torch is not installed");
    return;
  }
  test::ScratchDir dir;
  dir.write("trainer.py", kTorchTrainerScript);
  auto run = in_allocation("env PYTHONPATH='" + std::string(TUNERUN_PYTHON_PATH) +
                               "' /usr/bin/python3 trainer.py '" +
                               (dir.path() / "runs").string() + "'",
                           dir.path());
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(run.output.find("world size 2") != std::string::npos);
  const auto hosts = test::hosts_per_trial(dir.path() / "runs/py_trainer/experiment.db");
  REQUIRE(hosts.size() == 1);
  CHECK(hosts.begin()->second == std::set<std::string>{"n1", "n2"});
}
#endif
