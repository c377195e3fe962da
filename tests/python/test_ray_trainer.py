"""Ray Train's TorchTrainer guides: resume_from_checkpoint is what every
rank's train.get_checkpoint() returns on a fresh start; datasets are
sharded over the ranks (get_dataset_shard); TorchConfig sets the backend."""

import json

import pytest

pytest.importorskip("torch")

from tunerun import train  # noqa: E402
from tunerun.train.torch import TorchConfig, TorchTrainer  # noqa: E402

import ray_trainables  # noqa: E402


def fit(storage, name, checkpoint):
    return TorchTrainer(ray_trainables.reads_its_first_checkpoint,
                        scaling_config=train.ScalingConfig(num_workers=2),
                        run_config=train.RunConfig(name=name, storage_path=storage, verbose=0),
                        resume_from_checkpoint=checkpoint).fit()


def test_resume_from_checkpoint(storage, tmp_path):
    (tmp_path / "state.json").write_text(json.dumps({"epoch": 5}))
    result = fit(storage, "resumed", train.Checkpoint.from_directory(tmp_path))
    assert result.error is None, result.error
    assert result.metrics["start"] == 5
    assert fit(storage, "fresh", None).metrics["start"] is None


def test_each_rank_reads_its_shard_of_the_datasets(storage):
    # Ray Train's data guide: datasets={"train": ...}, train.get_dataset_shard("train")
    # in the train function; every row reaches exactly one rank.
    rows = [{"x": i, "y": 2 * i} for i in range(9)]
    result = TorchTrainer(
        ray_trainables.reads_its_dataset_shard, datasets={"train": rows},
        torch_config=TorchConfig(backend="gloo", timeout_s=60),
        scaling_config=train.ScalingConfig(num_workers=2, trainer_resources={"CPU": 0}),
        run_config=train.RunConfig(name="shards", storage_path=storage, verbose=0)).fit()
    assert result.error is None, result.error
    shards = result.metrics["shards"]
    assert len(shards) == 2
    assert sorted(x for shard in shards for x in shard) == list(range(9))
    assert abs(len(shards[0]) - len(shards[1])) <= 1
    assert result.metrics["backend"] == "gloo"
    assert result.metrics["batches"] == 2  # rank 0's 5 rows in whole batches of 2


def test_datasets_must_be_a_dict_of_iterables():
    with pytest.raises(ValueError, match="dict"):
        TorchTrainer(ray_trainables.reads_its_first_checkpoint, datasets=[1, 2])
    with pytest.raises(ValueError, match=r"datasets\['train'\] is not iterable"):
        TorchTrainer(ray_trainables.reads_its_first_checkpoint, datasets={"train": 3})


def test_get_dataset_shard_outside_a_trainer_says_so():
    with pytest.raises(RuntimeError, match="datasets="):
        train.get_dataset_shard("train")


def test_torch_config_refuses_an_unknown_backend():
    with pytest.raises(ValueError, match="backend"):
        TorchConfig(backend="mpi")
