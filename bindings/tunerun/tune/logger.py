"""Ray Tune's tune.logger: LoggerCallback for loggers of your own, and the
CSV and JSON loggers writing each trial's progress.csv and result.json (one
JSON object per line) into its directory, <experiment>/trials/<trial_id>.

They are tune.Callbacks given in RunConfig(callbacks=[...]); the Tuner
calls setup(experiment_path=...) before the run. Where we differ from Ray:
the experiment's SQLite store already holds every result, so neither file
is written unless asked for; and a trial is a tune.experiment.Trial record
(trial_id, status, config, last_result, local_path), not Ray's Trial.
"""

import csv
import json
import os

from tunerun.tune.callback import Callback
from tunerun.tune.experiment import Trial, _record
from tunerun.tune.result_grid import _flatten


class LoggerCallback(Callback):
    """Override log_trial_start(trial), log_trial_result(iteration, trial,
    result) and log_trial_end(trial, failed=False)."""

    def setup(self, *args, experiment_path=None, **info):
        self._experiment_path = experiment_path

    def log_trial_start(self, trial):
        pass

    def log_trial_result(self, iteration, trial, result):
        pass

    def log_trial_end(self, trial, failed=False):
        pass

    def _trial(self, trial_id, config, status, result):
        return _record(self.__dict__.setdefault("_trials", {}), trial_id, config, status, result,
                       getattr(self, "_experiment_path", None))

    def on_trial_start(self, trial_id, config):
        self.log_trial_start(self._trial(trial_id, config, Trial.RUNNING, None))

    def on_trial_result(self, trial_id, config, result):
        trial = self._trial(trial_id, config, Trial.RUNNING, result)
        self.log_trial_result(result.get("training_iteration"), trial, result)

    def on_trial_complete(self, trial_id, config, last_result):
        self.log_trial_end(self._trial(trial_id, config, Trial.TERMINATED, last_result))

    def on_trial_error(self, trial_id, config, error):
        self.log_trial_end(self._trial(trial_id, config, Trial.ERROR, None), failed=True)


class _FileLogger(LoggerCallback):
    _file = ""

    def _path(self, trial):
        if trial.local_path is None:
            raise RuntimeError(f"{type(self).__name__}: setup(experiment_path=...) was not "
                               "called (give it in RunConfig(callbacks=[...]))")
        os.makedirs(trial.local_path, exist_ok=True)
        return os.path.join(trial.local_path, self._file)


class JsonLoggerCallback(_FileLogger):
    """Appends each result to the trial's result.json (JSON lines), and its
    config to params.json, as Ray's."""
    _file = "result.json"

    def log_trial_start(self, trial):
        with open(os.path.join(os.path.dirname(self._path(trial)), "params.json"), "w") as f:
            json.dump(trial.config, f, default=repr)

    def log_trial_result(self, iteration, trial, result):
        with open(self._path(trial), "a") as f:
            f.write(json.dumps(result, default=repr) + "\n")


class CSVLoggerCallback(_FileLogger):
    """Appends each result to the trial's progress.csv, as Ray's: the columns
    of its first result (nested keys joined by "/")."""
    _file = "progress.csv"

    def log_trial_result(self, iteration, trial, result):
        flat = {}
        for key, value in result.items():
            _flatten(key, value, flat)
        columns = self.__dict__.setdefault("_columns", {})
        path = self._path(trial)
        new = trial.trial_id not in columns
        if new:
            columns[trial.trial_id] = list(flat)
        with open(path, "a", newline="") as f:
            writer = csv.DictWriter(f, columns[trial.trial_id], extrasaction="ignore")
            if new:
                writer.writeheader()
            writer.writerow(flat)

