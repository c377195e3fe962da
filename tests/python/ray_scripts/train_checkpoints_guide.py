# After Ray Train's "Saving and Loading Checkpoints" guide
# (doc/source/train/user-guides/checkpoints.rst, doc/source/train/doc_code/
# checkpoints.py, __pytorch_save_start__ and __checkpoint_config_start__):
# every rank reports, rank 0 saves the model with torch.save into a
# temporary directory, CheckpointConfig keeps the best two by a score,
# the TrainContext's sizes and ranks, and the result's best_checkpoints.
import os
import tempfile

import torch
import torch.nn as nn

import tunerun as ray
from tunerun import train
from tunerun.train import Checkpoint, CheckpointConfig, RunConfig, ScalingConfig
from tunerun.train.torch import TorchConfig, TorchTrainer


def train_func(config):
    n = 32
    torch.manual_seed(0)
    x = torch.randn(n, 4)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]])
    model = nn.Linear(4, 1)
    model = train.torch.prepare_model(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    ctx = train.get_context()
    checkpoint = train.get_checkpoint()
    start = 0
    if checkpoint:
        with checkpoint.as_directory() as d:
            state = torch.load(os.path.join(d, "model.pt"))
            model.module.load_state_dict(state["model"]) if hasattr(model, "module") \
                else model.load_state_dict(state["model"])
            start = state["epoch"] + 1
    for epoch in range(start, config["num_epochs"]):
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        metrics = {"loss": loss.item(), "epoch": epoch,
                   "world_size": ctx.get_world_size(), "local_world_size": ctx.get_local_world_size(),
                   "node_rank": ctx.get_node_rank()}
        with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
            checkpoint = None
            if ctx.get_world_rank() == 0:
                to_save = model.module.state_dict() if hasattr(model, "module") \
                    else model.state_dict()
                torch.save({"model": to_save, "epoch": epoch},
                           os.path.join(temp_checkpoint_dir, "model.pt"))
                checkpoint = Checkpoint.from_directory(temp_checkpoint_dir)
            train.report(metrics, checkpoint=checkpoint)


trainer = TorchTrainer(
    train_func,
    train_loop_config={"lr": 0.05, "num_epochs": 6},
    scaling_config=ScalingConfig(num_workers=2),
    torch_config=TorchConfig(backend="gloo"),
    run_config=RunConfig(
        storage_path=os.path.abspath("results"), name="ckpt_guide",
        checkpoint_config=CheckpointConfig(num_to_keep=2, checkpoint_score_attribute="loss",
                                           checkpoint_score_order="min")),
)
result = trainer.fit()
assert result.error is None
print(result.metrics)
assert result.metrics["world_size"] == 2
assert result.metrics["local_world_size"] == 2
assert result.metrics["node_rank"] == 0
assert len(result.best_checkpoints) == 2
losses = [m["loss"] for _, m in result.best_checkpoints]
assert max(losses) <= min(result.metrics_dataframe["loss"].iloc[:-2]) + 1e-9
with result.checkpoint.as_directory() as d:
    state = torch.load(os.path.join(d, "model.pt"))
assert state["epoch"] == 5
df = result.metrics_dataframe
assert list(df["epoch"]) == list(range(6))
ray.shutdown()
