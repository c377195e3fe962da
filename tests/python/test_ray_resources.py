"""Ray Tune's resources and fault-tolerance guides: PlacementGroupFactory
as a trial's resources, and Tuner.restore with Ray's arguments."""

import pytest

from tunerun import _tunerun, tune

import ray_trainables


def test_placement_group_factory_reserves_the_sum_of_its_bundles(storage):
    factory = tune.PlacementGroupFactory([{"CPU": 1}, {"CPU": 1}])
    assert factory.required_resources == {"CPU": 2}
    tuner = tune.Tuner(tune.with_resources(ray_trainables.returns_score, factory),
                       param_space={"a": 2, "b": 0},
                       run_config=tune.RunConfig(name="pgf", storage_path=storage, verbose=0))
    assert _tunerun.check_spec(tuner._spec)["trainable"]["cpus_per_worker"] == 2
    assert tuner.fit()[0].metrics["score"] == 4


def test_tune_run_takes_resources_per_trial_as_a_factory(storage):
    analysis = tune.run(ray_trainables.returns_score, config={"a": 1, "b": 0},
                        resources_per_trial=tune.PlacementGroupFactory([{"CPU": 1}]),
                        metric="score", mode="max", storage_path=storage, name="pgf", verbose=0)
    assert analysis.best_result["score"] == 1


def test_resources_as_a_function_of_the_config_are_refused():
    with pytest.raises(ValueError, match="function of the config"):
        tune.with_resources(ray_trainables.returns_score, lambda config: {"cpu": 1})


def test_restore_takes_ray_s_arguments(storage):
    grid = tune.Tuner(ray_trainables.returns_score, param_space={"a": 3, "b": 0},
                      run_config=tune.RunConfig(name="again", storage_path=storage,
                                                verbose=0)).fit()
    path = grid.experiment_path
    # Ray's positional order: path, trainable, resume_unfinished, resume_errored, ...
    restored = tune.Tuner.restore(path, ray_trainables.returns_score, True, False, False,
                                  param_space={"a": 3, "b": 0})
    assert restored.get_results()[0].metrics["score"] == 9
    with pytest.raises(ValueError, match="resume_unfinished"):
        tune.Tuner.restore(path, ray_trainables.returns_score, resume_unfinished=False,
                           param_space={"a": 3, "b": 0})


def test_restore_without_param_space_reuses_the_first_fit_s(storage, tmp_path):
    # Ray's fault-tolerance guide: Tuner.restore(path, trainable, restart_errored=True)
    # continues with the param_space and TuneConfig the experiment started with.
    flag = tmp_path / "flag"
    flag.write_text("")
    grid = tune.Tuner(ray_trainables.fails_while_flagged,
                      param_space={"x": tune.uniform(0, 1), "flag": str(flag)},
                      tune_config=tune.TuneConfig(metric="score", mode="max", num_samples=3),
                      run_config=tune.RunConfig(name="flagged", storage_path=storage,
                                                verbose=0)).fit()
    assert grid.num_errors == 3
    first = sorted(r.config["x"] for r in grid)
    flag.unlink()
    restored = tune.Tuner.restore(grid.experiment_path, ray_trainables.fails_while_flagged,
                                  restart_errored=True).fit()
    assert restored.num_errors == 0
    assert sorted(r.config["x"] for r in restored) == first
    # The metric and mode came back with the TuneConfig.
    assert restored.get_best_result().metrics["score"] == max(first)


def test_restore_keeps_a_lambda_param_space_and_asks_for_one_that_did_not_pickle(storage):
    grid = tune.Tuner(ray_trainables.returns_score,
                      param_space={"a": tune.sample_from(lambda spec: 2), "b": 0},
                      run_config=tune.RunConfig(name="lambda_space", storage_path=storage,
                                                verbose=0)).fit()
    assert grid[0].metrics["score"] == 4
    restored = tune.Tuner.restore(grid.experiment_path, ray_trainables.returns_score)
    assert restored._param_space["b"] == 0

    import threading
    lock = threading.Lock()
    grid = tune.Tuner(ray_trainables.returns_score,
                      param_space={"a": tune.sample_from(lambda spec: 2 if lock else 0), "b": 0},
                      run_config=tune.RunConfig(name="lock_space", storage_path=storage,
                                                verbose=0)).fit()
    with pytest.raises(ValueError, match="pass param_space"):
        tune.Tuner.restore(grid.experiment_path, ray_trainables.returns_score)


def test_a_trial_sees_its_resources(storage):
    grid = tune.Tuner(tune.with_resources(ray_trainables.reports_its_resources, {"cpu": 2}),
                      run_config=tune.RunConfig(name="seen", storage_path=storage,
                                                verbose=0)).fit()
    assert grid[0].metrics["required"] == {"CPU": 2}
    assert grid[0].metrics["bundles"] == 1
