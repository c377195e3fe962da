"""Ray's checkpointing and results-analysis guides: Result.get_best_checkpoint
and a checkpoint's metadata."""

import pytest

from tunerun import tune

import ray_trainables


def test_best_checkpoint_and_its_metadata(storage):
    grid = tune.Tuner(ray_trainables.checkpoints_with_metadata,
                      run_config=tune.RunConfig(name="ckpt", storage_path=storage,
                                                verbose=0)).fit()
    result = grid[0]
    best = result.get_best_checkpoint(metric="accuracy", mode="max")
    assert best.get_metadata() == {"step": 1, "seen": 0.9}
    assert result.get_best_checkpoint(metric="accuracy", mode="min").get_metadata()["step"] == 0
    with pytest.raises(RuntimeError):
        result.get_best_checkpoint(metric="loss", mode="min")
