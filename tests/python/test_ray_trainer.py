"""Ray Train's TorchTrainer guide: resume_from_checkpoint is what every
rank's train.get_checkpoint() returns on a fresh start."""

import json

import pytest

pytest.importorskip("torch")

from tunerun import train  # noqa: E402
from tunerun.train.torch import TorchTrainer  # noqa: E402

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


def test_datasets_are_refused():
    with pytest.raises(ValueError, match="datasets"):
        TorchTrainer(ray_trainables.reads_its_first_checkpoint, datasets={"train": [1, 2]})
