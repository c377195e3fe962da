"""Ray Tune's logging guide: a LoggerCallback of your own sees each trial's
start, results and end; CSVLoggerCallback and JsonLoggerCallback write
progress.csv and result.json into the trial's directory."""

import csv
import json
import os

from tunerun import tune
from tunerun.tune.logger import CSVLoggerCallback, JsonLoggerCallback, LoggerCallback

import ray_trainables
import trainables


class Recorder(LoggerCallback):
    def __init__(self):
        self.events = []

    def log_trial_start(self, trial):
        self.events.append(("start", trial.trial_id))

    def log_trial_result(self, iteration, trial, result):
        self.events.append(("result", iteration, result.get("step"), trial.config.get("x")))

    def log_trial_end(self, trial, failed=False):
        self.events.append(("end", trial.status, failed))


def fit(storage, name, trainable, callbacks, param_space):
    return tune.Tuner(trainable, param_space=param_space,
                      run_config=tune.RunConfig(name=name, storage_path=storage, verbose=0,
                                                callbacks=callbacks)).fit()


def test_a_logger_callback_sees_the_trial(storage):
    recorder = Recorder()
    fit(storage, "rec", ray_trainables.reports_done_early, [recorder], {"x": 7})
    assert recorder.events[0][0] == "start"
    assert recorder.events[1:4] == [("result", 1, 0, 7), ("result", 2, 1, 7),
                                    ("result", 3, 2, 7)]
    assert recorder.events[4] == ("end", "TERMINATED", False)


def test_a_failed_trial_ends_failed(storage):
    recorder = Recorder()
    grid = fit(storage, "fail", trainables.fails_at_step_two, [recorder], {})
    assert grid.num_errors == 1
    assert recorder.events[-1] == ("end", "ERROR", True)


def test_csv_and_json_loggers_write_into_the_trial_directory(storage):
    grid = fit(storage, "files", ray_trainables.reports_then_returns,
               [CSVLoggerCallback(), JsonLoggerCallback()], {"lr": 0.1})
    trial_dir = grid[0].path
    with open(os.path.join(trial_dir, "progress.csv")) as f:
        rows = list(csv.DictReader(f))
    assert [row["score"] for row in rows] == ["0", "1", "2", "100"]
    assert [row["training_iteration"] for row in rows] == ["1", "2", "3", "4"]
    with open(os.path.join(trial_dir, "result.json")) as f:
        results = [json.loads(line) for line in f]
    assert [r["final"] for r in results] == [False, False, False, True]
    with open(os.path.join(trial_dir, "params.json")) as f:
        assert json.load(f) == {"lr": 0.1}
