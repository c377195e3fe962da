"""Ray Tune's pre-Tuner API as its older guides and many scripts use it:
tune.run returning an ExperimentAnalysis, TuneError on failed trials, and
tune.run_experiments over Experiment objects or {name: spec} dicts."""

import os
import pathlib

import pytest

from tunerun import tune

import ray_trainables
import trainables


def test_tune_run_returns_an_experiment_analysis(storage):
    analysis = tune.run(ray_trainables.returns_score,
                        config={"a": tune.grid_search([1, 2, 3]), "b": 1},
                        metric="score", mode="max", storage_path=storage, name="legacy",
                        verbose=0)
    assert isinstance(analysis, tune.ExperimentAnalysis)
    assert analysis.best_config == {"a": 3, "b": 1}
    assert analysis.best_result["score"] == 10
    assert sorted(r["score"] for r in analysis.results.values()) == [2, 5, 10]
    assert len(analysis.results_df) == 3
    assert analysis.get_best_config(metric="score", mode="min")["a"] == 1
    assert analysis.best_trial.config["a"] == 3
    # The same experiment read again from its directory.
    again = tune.ExperimentAnalysis(analysis.experiment_path, default_metric="score",
                                    default_mode="max")
    assert again.best_config == analysis.best_config


def test_tune_run_raises_on_a_failed_trial(storage):
    with pytest.raises(tune.TuneError, match="Trials did not complete"):
        tune.run(trainables.fails_at_step_two, storage_path=storage, name="fails", verbose=0)
    analysis = tune.run(trainables.fails_at_step_two, storage_path=storage, name="kept",
                        verbose=0, raise_on_failed_trial=False)
    assert [t.status for t in analysis.trials] == ["ERROR"]


def test_tune_run_refuses_what_it_cannot_do(storage):
    with pytest.raises(ValueError, match="export_formats"):
        tune.run(ray_trainables.returns_score, config={"a": 1, "b": 1}, storage_path=storage,
                 export_formats=["model"])
    with pytest.raises(TypeError, match="no_such_option"):
        tune.run(ray_trainables.returns_score, storage_path=storage, no_such_option=1)


def test_run_experiments_runs_each_experiment_and_returns_their_trials(storage):
    # The two forms Ray's run_experiments takes: Experiment objects and
    # {name: spec} with the trainable under "run".
    first = tune.Experiment("first", ray_trainables.returns_score,
                            config={"a": tune.grid_search([1, 2]), "b": 1},
                            storage_path=storage)
    trials = tune.run_experiments([first], verbose=0)
    assert sorted(t.last_result["score"] for t in trials) == [2, 5]
    assert {t.status for t in trials} == {"TERMINATED"}
    trials = tune.run_experiments(
        {"second": {"run": ray_trainables.returns_score, "config": {"a": 3, "b": 1},
                    "num_samples": 2, "storage_path": storage},
         "third": {"run": ray_trainables.returns_score, "config": {"a": 1, "b": 2},
                   "storage_path": storage}}, verbose=0)
    assert sorted(t.last_result["score"] for t in trials) == [3, 10, 10]
    names = sorted(p.name for p in pathlib.Path(storage).iterdir() if p.is_dir())
    assert names == ["first", "second", "third"]


def test_run_experiments_raises_on_a_failed_trial_and_refuses_bad_specs(storage):
    with pytest.raises(tune.TuneError, match="Trials did not complete"):
        tune.run_experiments(tune.Experiment("fails", trainables.fails_at_step_two,
                                             storage_path=storage), verbose=0)
    with pytest.raises(ValueError, match="'run' key"):
        tune.run_experiments({"no_run": {"config": {}}})
    with pytest.raises(ValueError, match="no trainable is registered as 'not_registered'"):
        tune.Experiment("named", "not_registered")
    with pytest.raises(TypeError, match="no_such_option"):
        tune.Experiment("typo", ray_trainables.returns_score, no_such_option=1)


def test_a_registered_trainable_runs_by_its_name(storage):
    # Ray's older examples: register_trainable, then "run": "my_class".
    tune.register_trainable("score_fn", ray_trainables.returns_score)
    trials = tune.run_experiments({"by_name": {"run": "score_fn", "config": {"a": 2, "b": 0},
                                               "storage_path": storage}}, verbose=0)
    assert [t.last_result["score"] for t in trials] == [4]
    analysis = tune.run("score_fn", config={"a": 3, "b": 0}, storage_path=storage,
                        name="run_by_name", verbose=0)
    assert [r["score"] for r in analysis.results.values()] == [9]


def test_ray_1_function_checkpoints(storage, tmp_path):
    # Ray 1.x: f(config, checkpoint_dir=None) resumes from the directory that
    # `with tune.checkpoint_dir(step=...)` wrote before the last report.
    import json
    flag = tmp_path / "flag"
    flag.touch()
    analysis = tune.run(ray_trainables.ray1_checkpoint_dir, name="ray1", storage_path=storage,
                        config={"flag": str(flag)}, max_failures=1, verbose=0)
    (trial,) = analysis.trials
    assert trial.last_result["count"] == 5
    assert trial.last_result["resumed_at"] == 2
    checkpoint = analysis.get_best_checkpoint(trial, metric="count", mode="max")
    with open(os.path.join(checkpoint.path, "count.json")) as f:
        assert json.load(f) == {"count": 5}
