# After Ray 2.0-2.6 AIR-era scripts (doc/source/ray-air examples and users'
# repositories): `from ray.air import session`, session.report(metrics,
# checkpoint=), session.get_checkpoint(), session.get_trial_name()/
# get_trial_id()/get_world_size(), ray.air's RunConfig, ScalingConfig,
# CheckpointConfig and FailureConfig, a TorchTrainer's result.
import os
import tempfile

import torch

import tunerun as ray
from tunerun import tune
from tunerun.air import CheckpointConfig, FailureConfig, RunConfig, ScalingConfig, session
from tunerun.train import Checkpoint
from tunerun.train.torch import TorchTrainer


def objective(config):
    start = 0
    ckpt = session.get_checkpoint()
    if ckpt:
        with ckpt.as_directory() as d:
            start = int(open(os.path.join(d, "it")).read()) + 1
    assert session.get_world_size() == 1
    assert session.get_world_rank() == 0
    name = session.get_trial_name()
    for i in range(start, 4):
        with tempfile.TemporaryDirectory() as tmp:
            open(os.path.join(tmp, "it"), "w").write(str(i))
            session.report({"loss": (config["x"] - 2) ** 2 + 1.0 / (i + 1), "name": name,
                            "id": session.get_trial_id()},
                           checkpoint=Checkpoint.from_directory(tmp))


ray.init(ignore_reinit_error=True)
tuner = tune.Tuner(
    objective,
    param_space={"x": tune.grid_search([0, 1, 2, 3])},
    tune_config=tune.TuneConfig(metric="loss", mode="min"),
    run_config=RunConfig(name="air_session", storage_path=os.path.abspath("results"),
                         checkpoint_config=CheckpointConfig(num_to_keep=2),
                         failure_config=FailureConfig(max_failures=1)),
)
results = tuner.fit()
best = results.get_best_result()
assert best.config["x"] == 2
assert best.metrics["id"] == best.metrics["trial_id"]
assert best.metrics["name"]
with best.checkpoint.as_directory() as d:
    assert open(os.path.join(d, "it")).read() == "3"


def train_loop_per_worker(config):
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=config["lr"])
    x = torch.randn(64, 2)
    y = x.sum(dim=1, keepdim=True)
    for epoch in range(3):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        session.report({"loss": loss.item(), "world_size": session.get_world_size(),
                        "rank": session.get_world_rank()})


trainer = TorchTrainer(train_loop_per_worker, train_loop_config={"lr": 0.1},
                       scaling_config=ScalingConfig(num_workers=2, use_gpu=False),
                       run_config=RunConfig(storage_path=os.path.abspath("results")))
result = trainer.fit()
assert result.metrics["world_size"] == 2
assert result.metrics["rank"] == 0
print(result.metrics)
ray.shutdown()
