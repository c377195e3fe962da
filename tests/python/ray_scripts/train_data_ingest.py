# After Ray Train's "Data Loading and Preprocessing" guide
# (doc/source/train/user-guides/data-loading-preprocessing.rst and
# doc/source/train/doc_code/data_ingest_torch_new.py): Ray Data datasets given to
# a TorchTrainer, each worker's shard read with iter_torch_batches, one dataset
# left unsplit with DataConfig.
import numpy as np
import torch

import tunerun as ray
from tunerun import train
from tunerun.train import DataConfig, ScalingConfig
from tunerun.train.torch import TorchTrainer

dataset = ray.data.from_items([{"x": [float(i), 1.0], "y": float(i % 2)} for i in range(64)])


def increment(batch: dict) -> dict:
    batch["y"] = batch["y"] + 1
    return batch


dataset = dataset.map_batches(increment)
train_dataset, valid_dataset = dataset.train_test_split(test_size=0.25)
assert train_dataset.count() == 48 and valid_dataset.count() == 16


def train_loop_per_worker(config):
    train_shard = train.get_dataset_shard("train")
    valid_shard = train.get_dataset_shard("valid")
    model = ray.train.torch.prepare_model(torch.nn.Linear(2, 1))
    rows = 0
    for epoch in range(2):
        rows = 0
        for batch in train_shard.iter_torch_batches(batch_size=8, dtypes=torch.float32):
            rows += len(batch["y"])
            assert batch["x"].shape[1] == 2 and float(batch["y"].min()) >= 1
            model(batch["x"]).sum().backward()
    valid_rows = sum(len(b["y"]) for b in valid_shard.iter_batches(batch_size=5))
    train.report({"rows": rows, "valid_rows": valid_rows})


trainer = TorchTrainer(
    train_loop_per_worker,
    scaling_config=ScalingConfig(num_workers=2),
    datasets={"train": train_dataset, "valid": valid_dataset},
    dataset_config=DataConfig(datasets_to_split=["train"]),
)
result = trainer.fit()
assert result.metrics["rows"] == 24, result.metrics
assert result.metrics["valid_rows"] == 16, result.metrics
