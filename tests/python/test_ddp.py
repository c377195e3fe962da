"""PyTorch DDP from Python: TorchTrainer's ranks form a Gloo group."""

import json
import os

import pytest

pytest.importorskip("torch")

from tunerun import train  # noqa: E402
from tunerun.train.torch import TorchTrainer  # noqa: E402

import trainables_torch  # noqa: E402


def gradients(storage, name, num_workers, batch_size):
    trainer = TorchTrainer(trainables_torch.ddp_gradients,
                           train_loop_config={"batch_size": batch_size},
                           scaling_config=train.ScalingConfig(num_workers=num_workers),
                           run_config=train.RunConfig(name=name, storage_path=storage, verbose=0))
    result = trainer.fit()
    assert result.error is None, result.error
    assert result.metrics["world_size"] == num_workers
    assert result.metrics["samples"] == batch_size
    assert result.metrics["node_rank"] == 0  # every local rank on one node
    return [json.load(open(os.path.join(result.path, f"grads_{r}.json")))
            for r in range(num_workers)]


def test_two_ranks_equal_one_rank_with_the_double_batch(storage):
    two = gradients(storage, "two", 2, 8)
    one = gradients(storage, "one", 1, 16)[0]
    for rank in two:
        assert len(rank) == len(one)
        assert max(abs(a - b) for a, b in zip(rank, one)) < 1e-5
