"""Ray Tune's logging and outputs guide: a CLIReporter with chosen metric and
parameter columns prints a table of the trials."""

import pytest

from tunerun import tune

import ray_trainables


def test_cli_reporter_prints_the_trials(storage, capsys):
    reporter = tune.CLIReporter(metric_columns=["score"], max_report_frequency=0)
    reporter.add_parameter_column("a", "alpha")
    grid = tune.Tuner(ray_trainables.returns_score,
                      param_space={"a": tune.grid_search([1, 2, 3]), "b": 1},
                      run_config=tune.RunConfig(name="cli", storage_path=storage, verbose=0,
                                                progress_reporter=reporter)).fit()
    assert grid.num_errors == 0
    out = capsys.readouterr().out
    final = out[out.rindex("== Status =="):]
    assert "Number of trials: 3 (3 TERMINATED)" in final
    header = [column.strip() for column in final.splitlines()[2].split("|")]
    assert header == ["Trial name", "status", "alpha", "score"]
    rows = [[c.strip() for c in line.split("|")] for line in final.splitlines()[4:]]
    assert sorted((row[1], row[2], row[3]) for row in rows) == [
        ("TERMINATED", "1", "2"), ("TERMINATED", "2", "5"), ("TERMINATED", "3", "10")]


def test_tune_run_takes_a_progress_reporter(storage, capsys):
    tune.run(ray_trainables.returns_score, config={"a": 2, "b": 0}, storage_path=storage,
             name="cli", verbose=0, progress_reporter=tune.CLIReporter(metric_columns=["score"]))
    assert "== Status ==" in capsys.readouterr().out


def test_progress_reporter_must_be_a_reporter(storage):
    with pytest.raises(ValueError, match="progress_reporter"):
        tune.Tuner(ray_trainables.returns_score,
                   run_config=tune.RunConfig(storage_path=storage, progress_reporter="table"))
