"""Results a Python user can trust: a failed trial is never the best, and a
metric no result holds fails its trial loudly (Ray's strict metric
checking), unless TUNE_DISABLE_STRICT_METRIC_CHECKING=1."""

from tunerun import train, tune

import trainables


def run_config(storage, name):
    return train.RunConfig(name=name, storage_path=storage, verbose=0)


def test_get_best_result_skips_a_failed_trial(storage):
    grid = tune.Tuner(trainables.fails_with_the_lowest_loss,
                      param_space={"fail": tune.grid_search([True, False])},
                      tune_config=tune.TuneConfig(metric="loss", mode="min"),
                      run_config=run_config(storage, "failed")).fit()
    assert sorted(r.status for r in grid) == ["ERROR", "TERMINATED"]
    best = grid.get_best_result()
    assert best.status == "TERMINATED"
    assert best.config == {"fail": False}
    assert best.metrics["loss"] == 5.0


def test_a_metric_no_result_holds_fails_the_trial_naming_it(storage):
    grid = tune.Tuner(trainables.quadratic, param_space={"x": 1, "steps": 2},
                      tune_config=tune.TuneConfig(metric="accuracy", mode="max"),
                      run_config=run_config(storage, "strict")).fit()
    assert grid[0].status == "ERROR"
    error = str(grid[0].error)
    assert "did not include the metric(s) `accuracy`" in error
    assert "TUNE_DISABLE_STRICT_METRIC_CHECKING" in error
    assert '"loss":' in error


def test_ray_switch_turns_strict_metric_checking_off(storage, monkeypatch):
    monkeypatch.setenv("TUNE_DISABLE_STRICT_METRIC_CHECKING", "1")
    grid = tune.Tuner(trainables.quadratic, param_space={"x": 1, "steps": 2},
                      tune_config=tune.TuneConfig(metric="accuracy", mode="max"),
                      run_config=run_config(storage, "unchecked")).fit()
    assert grid[0].status == "TERMINATED"
