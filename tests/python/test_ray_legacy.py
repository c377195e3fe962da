"""Ray Tune's pre-Tuner API as its older guides and many scripts use it:
tune.run returning an ExperimentAnalysis, and TuneError on failed trials."""

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
