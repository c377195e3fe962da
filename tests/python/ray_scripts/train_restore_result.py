# After Ray Train's fault-tolerance and results guides
# (doc/source/train/user-guides/fault-tolerance.rst, results.rst): a run is
# restored with TorchTrainer.restore when can_restore says so, and its Result
# read again with Result.from_path; enable_reproducibility and get_devices.
import os
import tempfile

import torch

import tunerun as ray
from tunerun import train
from tunerun.train import Checkpoint, Result, RunConfig, ScalingConfig
from tunerun.train.torch import TorchTrainer

storage = os.path.abspath("results")


def train_func(config):
    ray.train.torch.enable_reproducibility(seed=1)
    assert ray.train.torch.get_devices()[0].type == "cpu"
    start = 0
    checkpoint = train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as d:
            start = torch.load(os.path.join(d, "state.pt"))["epoch"] + 1
    for epoch in range(start, config["epochs"]):
        if epoch == 2 and not os.path.exists(config["marker"]):
            open(config["marker"], "w").close()
            raise RuntimeError("the node went away")
        with tempfile.TemporaryDirectory() as d:
            torch.save({"epoch": epoch}, os.path.join(d, "state.pt"))
            train.report({"epoch": epoch, "start": start}, checkpoint=Checkpoint.from_directory(d))


trainer = TorchTrainer(train_func,
                       train_loop_config={"epochs": 4, "marker": os.path.abspath("failed_once")},
                       scaling_config=ScalingConfig(num_workers=1),
                       run_config=RunConfig(name="restorable", storage_path=storage))
try:
    trainer.fit()
except ray.train.base_trainer.TrainingFailedError as error:
    print("first run failed:", str(error).splitlines()[0])
else:
    raise AssertionError("the first run should fail")

experiment_path = os.path.join(storage, "restorable")
assert TorchTrainer.can_restore(experiment_path)
result = TorchTrainer.restore(experiment_path).fit()
assert result.metrics["epoch"] == 3 and result.metrics["start"] == 2, result.metrics

again = Result.from_path(result.path)
assert again.metrics["epoch"] == 3
assert again.checkpoint is not None
