"""Ray Tune's CLIReporter: a table of the trials (status, parameters,
metrics) printed to stdout every max_report_frequency seconds while fit()
runs, and once at the end. Given as RunConfig(progress_reporter=...) or
tune.run(progress_reporter=...); it runs as a tune.Callback on the
controller's loop (a table is printed from there, after a result).

ProgressReporter is Ray's base for a reporter of one's own:
should_report(trials, done=False) and report(trials, done, *sys_info), called
with Trial records after each trial event and once with done=True at the end.
JupyterNotebookReporter is CLIReporter here.

Where we differ from Ray: the table is plain text (no HTML), and a trial
appears once it has started.
"""

import sys
import time

from tunerun.tune.callback import Callback
from tunerun.tune.experiment import _record


def _cell(value, width):
    text = f"{value:.6g}" if isinstance(value, float) else str(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def _lookup(row, key):
    for part in key.split("/"):
        if not isinstance(row, dict) or part not in row:
            return ""
        row = row[part]
    return row


class CLIReporter(Callback):
    """metric_columns / parameter_columns: keys (or {key: header}); None: the
    metrics of the latest result and the config's keys."""

    def __init__(self, metric_columns=None, parameter_columns=None, total_samples=None,
                 max_progress_rows=20, max_error_rows=20, max_column_length=20,
                 max_report_frequency=5, infer_limit=3, print_intermediate_tables=None,
                 metric=None, mode=None, sort_by_metric=False):
        self._metrics = self._columns(metric_columns)
        self._parameters = self._columns(parameter_columns)
        self._max_rows = max_progress_rows
        self._width = max_column_length
        self._every = max_report_frequency
        self._infer_limit = infer_limit
        self._intermediate = print_intermediate_tables is not False
        self._metric, self._mode, self._sort = metric, mode, sort_by_metric
        self._trials = {}  # trial_id -> [status, config, last result]
        self._last = 0.0

    @staticmethod
    def _columns(columns):
        if columns is None:
            return None
        return dict(columns) if isinstance(columns, dict) else {c: c for c in columns}

    def add_metric_column(self, metric, representation=None):
        self._metrics = self._metrics or {}
        self._metrics[metric] = representation or metric

    def add_parameter_column(self, parameter, representation=None):
        self._parameters = self._parameters or {}
        self._parameters[parameter] = representation or parameter

    def on_trial_start(self, trial_id, config):
        self._trials[trial_id] = ["RUNNING", config, {}]

    def on_trial_result(self, trial_id, config, result):
        self._trials[trial_id] = ["RUNNING", config, result]
        if self._intermediate and time.monotonic() - self._last >= self._every:
            self.report()

    def on_trial_complete(self, trial_id, config, last_result):
        self._trials[trial_id] = ["TERMINATED", config, last_result or {}]

    def on_trial_error(self, trial_id, config, error):
        self._trials[trial_id] = ["ERROR", config, self._trials.get(trial_id, [0, 0, {}])[2]]

    def _table(self):
        trials = list(self._trials.items())
        if self._sort and self._metric:
            trials.sort(key=lambda t: t[1][2].get(self._metric, float("nan")),
                        reverse=self._mode == "max")
        parameters = self._parameters or {k: k for _, (_, c, _) in trials[:1] for k in c}
        metrics = self._metrics
        if metrics is None:
            latest = next((r for _, (_, _, r) in reversed(trials) if r), {})
            numeric = [k for k, v in latest.items() if isinstance(v, (int, float))
                       and not isinstance(v, bool) and k not in ("time_this_iter_s",)]
            metrics = {k: k for k in numeric[:self._infer_limit]}
        header = ["Trial name", "status", *parameters.values(), *metrics.values()]
        name = getattr(self, "_name_trial", None) or (lambda trial_id, config: trial_id)
        rows = [[name(trial_id, config), status, *(_lookup(config, k) for k in parameters),
                 *(_lookup(result, k) for k in metrics)]
                for trial_id, (status, config, result) in trials[:self._max_rows]]
        widths = [max(len(_cell(v, self._width)) for v in column)
                  for column in zip(header, *rows)]
        lines = [" | ".join(_cell(v, self._width).ljust(w) for v, w in zip(row, widths))
                 for row in [header, *rows]]
        lines.insert(1, "-+-".join("-" * w for w in widths))
        counts = {}
        for status, _, _ in self._trials.values():
            counts[status] = counts.get(status, 0) + 1
        summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        return f"== Status ==\nNumber of trials: {len(self._trials)} ({summary})\n" + \
            "\n".join(lines)

    def _finish(self):
        self.report()

    def report(self):
        """Prints the table now."""
        self._last = time.monotonic()
        if self._trials:
            print(self._table(), file=sys.stdout, flush=True)


class JupyterNotebookReporter(CLIReporter):
    """Ray's notebook reporter: the same plain-text table as CLIReporter."""

    def __init__(self, overwrite=True, *args, **kwargs):
        super().__init__(*args, **kwargs)


class ProgressReporter(Callback):
    """Ray's ProgressReporter: subclass it with should_report(trials,
    done=False) -> bool and report(trials, done, *sys_info); `trials` are
    tune.experiment.Trial records (trial_id, status, config, last_result)."""

    def should_report(self, trials, done=False):
        return True

    def report(self, trials, done, *sys_info):
        raise NotImplementedError(f"{type(self).__name__}.report(trials, done, *sys_info)")

    def setup(self, start_time=None, total_samples=None, metric=None, mode=None, **info):
        self._experiment_path = info.get("experiment_path")

    def _event(self, trial_id, config, status, result, done=False):
        records = self.__dict__.setdefault("_records", {})
        if trial_id is not None:
            _record(records, trial_id, config, status, result,
                    getattr(self, "_experiment_path", None))
        trials = list(records.values())
        if self.should_report(trials, done=done):
            counts = {}
            for trial in trials:
                counts[trial.status] = counts.get(trial.status, 0) + 1
            summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
            self.report(trials, done, f"Number of trials: {len(trials)} ({summary})")

    def on_trial_start(self, trial_id, config):
        self._event(trial_id, config, "RUNNING", None)

    def on_trial_result(self, trial_id, config, result):
        self._event(trial_id, config, "RUNNING", result)

    def on_trial_complete(self, trial_id, config, last_result):
        self._event(trial_id, config, "TERMINATED", last_result)

    def on_trial_error(self, trial_id, config, error):
        self._event(trial_id, config, "ERROR", None)

    def _finish(self):
        self._event(None, None, None, None, done=True)
