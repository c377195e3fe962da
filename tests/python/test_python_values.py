"""Any Python value where Ray takes one: numpy values, dataclasses and
tunerun's own config objects in the param_space, domains nested in lists,
and reported values that are not numbers."""

import dataclasses
import os

import numpy as np

import tunerun
from tunerun import train, tune

import trainables


def run_config(storage, name):
    return train.RunConfig(name=name, storage_path=storage, verbose=0)


@dataclasses.dataclass
class Layer:
    width: int
    act: str = "relu"


def describes(config):
    layers, arr = config["layers"], config["arr"]
    train.report({
        "layer_types": [type(layer).__name__ for layer in layers],
        "widths": [layer.width if isinstance(layer, Layer) else layer for layer in layers],
        "arr_sum": float(arr.sum()), "arr_type": type(arr).__name__,
        "np_scalar": config["lr"], "ckpt_is_checkpoint": isinstance(config["ckpt"],
                                                                    train.Checkpoint),
        "sc_workers": config["sc"].num_workers, "nested": config["deep"]["list"][1][0],
    })


def test_objects_numpy_and_nested_domains_in_the_param_space(storage, tmp_path):
    ckpt_dir = tmp_path / "ckpt"
    ckpt_dir.mkdir()
    space = {
        "layers": [Layer(8), tune.grid_search([Layer(16), Layer(32, "tanh")]), 4],
        "arr": np.arange(4.0),
        "lr": np.float32(0.5),
        "ckpt": train.Checkpoint.from_directory(str(ckpt_dir)),
        "sc": train.ScalingConfig(num_workers=3),
        "deep": {"list": [0, [tune.grid_search(["a", "b"])]]},
    }
    def dirname(trial):  # it sees the objects too
        return f"w{trial.config['layers'][1].width}_{trial.config['deep']['list'][1][0]}"
    grid = tune.Tuner(describes, param_space=space,
                      tune_config=tune.TuneConfig(trial_dirname_creator=dirname),
                      run_config=run_config(storage, "objects")).fit()
    assert not grid.errors, grid.errors
    assert sorted(os.path.basename(r.path) for r in grid) == ["w16_a", "w16_b", "w32_a", "w32_b"]
    metrics = sorted((r.metrics["widths"], r.metrics["nested"]) for r in grid)
    assert metrics == [([8, 16, 4], "a"), ([8, 16, 4], "b"), ([8, 32, 4], "a"),
                       ([8, 32, 4], "b")]
    for r in grid:
        m = r.metrics
        assert m["layer_types"] == ["Layer", "Layer", "int"]
        assert (m["arr_sum"], m["arr_type"], m["np_scalar"]) == (6.0, "ndarray", 0.5)
        assert m["ckpt_is_checkpoint"] is True and m["sc_workers"] == 3
        # Result.config holds the objects as given, in the driver and from tunerun.load.
        assert isinstance(r.config["layers"][1], Layer) and isinstance(r.config["arr"], np.ndarray)
        assert isinstance(r.config["deep"]["list"][1], list)
    loaded = tunerun.load(grid.experiment_path)
    assert {loaded_r.config["layers"][1].width for loaded_r in loaded} == {16, 32}
    assert all(isinstance(r.config["sc"], train.ScalingConfig) for r in loaded)


def test_a_tuner_over_a_torch_trainer_takes_scaling_config_from_the_param_space(storage):
    from tunerun.train.torch import TorchTrainer
    trainer = TorchTrainer(trainables.world_size_probe,
                           scaling_config=train.ScalingConfig(num_workers=1))
    grid = tune.Tuner(trainer, param_space={
        "scaling_config": train.ScalingConfig(num_workers=2),
        "train_loop_config": {"lr": tune.grid_search([0.1, 0.2])}},
        run_config=run_config(storage, "scaling")).fit()
    assert not grid.errors, grid.errors
    assert sorted((r.metrics["world_size"], r.metrics["lr"]) for r in grid) == [(2, 0.1),
                                                                                 (2, 0.2)]


def test_reported_values_that_are_not_numbers_are_kept(storage):
    grid = tune.Tuner(trainables.reports_anything,
                      run_config=run_config(storage, "anything")).fit()
    assert grid[0].status == "TERMINATED", grid[0].error
    m = grid[0].metrics
    assert m["none"] is None and m["text"] == "abc" and m["list"] == [1, "a", None]
    assert m["array"] == [[0, 1], [2, 3]] and m["np_float"] == 0.25
    assert m["ellipsis"] == "Ellipsis" and m["tuple"] == [1, 2]
    assert m["object"].startswith("<object object at")
    assert m["score"] == 1
