"""Scripts written for Ray 2.0-2.6 use ray.air's names: air.RunConfig,
air.FailureConfig, ray.air.session and dict checkpoints
(Checkpoint.from_dict / to_dict). `from tunerun import air` runs them."""

import pytest

from tunerun import air, tune

import ray_trainables


def test_an_air_era_function_restores_from_its_dict_checkpoint(storage, tmp_path):
    flag = tmp_path / "fail_once"
    flag.write_text("")
    tuner = tune.Tuner(
        ray_trainables.air_session_counter,
        param_space={"flag": str(flag)},
        run_config=air.RunConfig(storage_path=storage, name="air_era", verbose=0,
                                 failure_config=air.FailureConfig(max_failures=1)),
    )
    [result] = list(tuner.fit())
    assert result.error is None
    assert not flag.exists()  # it did fail once
    # The restart resumed from the step-2 checkpoint's dict: steps 1..5 once each.
    steps = list(result.metrics_dataframe["step"])
    assert steps == [1, 2, 3, 4, 5]
    assert list(result.metrics_dataframe["training_iteration"]) == steps
    assert result.metrics["world_size"] == 1
    assert result.metrics["name"].startswith("air_era")
    assert result.checkpoint.to_dict() == {"step": 5}


def test_air_names_are_train_names():
    from tunerun import train
    from tunerun.air import session
    from tunerun.air.config import ScalingConfig
    assert air.RunConfig is train.RunConfig
    assert air.CheckpointConfig is train.CheckpointConfig
    assert ScalingConfig is train.ScalingConfig
    assert session.report is train.report


def test_to_dict_of_a_directory_checkpoint_says_what_to_do(tmp_path):
    checkpoint = air.Checkpoint.from_directory(tmp_path)
    with pytest.raises(ValueError, match="as_directory"):
        checkpoint.to_dict()
    with pytest.raises(TypeError, match="takes a dict"):
        air.Checkpoint.from_dict([1, 2])
