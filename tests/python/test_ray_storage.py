"""Where Ray puts an experiment and what it calls it: storage_path with ~
and environment variables, default names unique per fit(), and an unseeded
run drawing fresh configs whose seed the experiment records."""

import json
import os
import sqlite3

from tunerun import tune

import ray_trainables


def sampled(storage, name, seed=None):
    grid = tune.Tuner(ray_trainables.returns_score,
                      param_space={"a": tune.uniform(0, 1), "b": 0},
                      tune_config=tune.TuneConfig(num_samples=3, seed=seed),
                      run_config=tune.RunConfig(name=name, storage_path=storage,
                                                verbose=0)).fit()
    with sqlite3.connect(os.path.join(grid.experiment_path, "experiment.db")) as db:
        (spec,) = db.execute("SELECT spec FROM experiment").fetchone()
    return sorted(r.config["a"] for r in grid), json.loads(spec)["sweep"]["seed"]


def test_storage_path_expands_home_and_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RESULTS", "results")
    grid = tune.Tuner(ray_trainables.returns_score, param_space={"a": 1, "b": 0},
                      run_config=tune.RunConfig(name="e", storage_path="~/$RESULTS",
                                                verbose=0)).fit()
    assert grid.experiment_path == str(tmp_path / "home" / "results" / "e")
    assert not os.path.exists("~")


def test_ray_2_0_local_dir_is_the_storage_path(tmp_path, monkeypatch):
    # Ray 2.0-2.6's air.RunConfig(local_dir=...), renamed storage_path in 2.7.
    import pytest
    from tunerun import air
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    grid = tune.Tuner(ray_trainables.returns_score, param_space={"a": 1, "b": 0},
                      run_config=air.RunConfig(name="old", local_dir="~/ray_results",
                                               verbose=0)).fit()
    assert grid.experiment_path == str(tmp_path / "home" / "ray_results" / "old")
    with pytest.raises(ValueError, match="not both"):
        air.RunConfig(storage_path="a", local_dir="b")


def test_two_unnamed_fits_get_distinct_names(storage):
    paths = []
    for _ in range(2):
        grid = tune.Tuner(ray_trainables.returns_score, param_space={"a": 1, "b": 0},
                          run_config=tune.RunConfig(storage_path=storage, verbose=0)).fit()
        assert grid.num_errors == 0
        paths.append(grid.experiment_path)
    assert paths[0] != paths[1]
    assert all(os.path.basename(p).startswith("returns_score_") for p in paths)


def test_unseeded_runs_differ_and_record_their_seed(storage):
    first, seed = sampled(storage, "one")
    second, _ = sampled(storage, "two")
    assert first != second
    # The recorded seed repeats the run.
    again, same = sampled(storage, "again", seed=seed)
    assert (again, same) == (first, seed)
