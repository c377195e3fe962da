"""ResultGrid and Result, as Ray Tune's: what Tuner.fit() returns, read from
the experiment's database (the C++ tune::ResultGrid) once the run ends."""

import math
import os
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from tunerun import _tunerun
from tunerun.train.checkpoint import Checkpoint
from tunerun.tune import _values
from tunerun.tune.error import TrialError, trial_error


def _error(message, path):
    """Result.error of a trial whose error is `message`: with the exception
    and traceback of the rank that raised it, when that rank saved them."""
    import glob
    import pickle
    for file in sorted(glob.glob(os.path.join(glob.escape(path), "error_rank*.pkl"))):
        try:
            with open(file, "rb") as f:
                record = pickle.load(f)
        except Exception:
            continue
        # A record of an earlier attempt says something else than the trial's error.
        if message.endswith(record["text"]):
            return trial_error(message, record)
    return trial_error(message, None)


@dataclass
class Result:
    metrics: dict
    config: dict
    checkpoint: Optional[Checkpoint]
    path: str
    error: Optional[TrialError] = None
    trial_id: str = ""
    status: str = ""
    best_checkpoints: List[Tuple[Checkpoint, dict]] = field(default_factory=list)
    history: List[dict] = field(default_factory=list)

    def get_best_checkpoint(self, metric, mode) -> Checkpoint:
        """The checkpoint of best_checkpoints whose result is best by `metric`
        ("min" or "max" `mode`), as Ray's: RuntimeError when the trial kept
        no checkpoint or none of their results has the metric."""
        if mode not in ("min", "max"):
            raise ValueError(f'mode must be "min" or "max", got {mode!r}')
        if not self.best_checkpoints:
            raise RuntimeError(f"trial {self.trial_id} has no checkpoint")
        scored = [(c, m) for c, m in self.best_checkpoints if metric in m]
        if not scored:
            raise RuntimeError(f"no checkpoint of trial {self.trial_id} has the metric {metric!r}")
        pick = max if mode == "max" else min
        return pick(scored, key=lambda pair: pair[1][metric])[0]

    @property
    def metrics_dataframe(self):
        import pandas
        return pandas.DataFrame([_flat(h) for h in self.history])

    @classmethod
    def from_path(cls, path):
        """The Result stored at `path`: a trial's directory, or an experiment
        holding one trial (what TorchTrainer.fit() ran), as Ray's."""
        path = os.path.abspath(os.path.expanduser(os.fspath(path))).rstrip("/")
        experiment = path
        while not os.path.isfile(os.path.join(experiment, "experiment.db")):
            parent = os.path.dirname(experiment)
            if parent == experiment:
                raise ValueError(f"Result.from_path: {path} is in no experiment "
                                 "(no experiment.db in it or above it)")
            experiment = parent
        grid = ResultGrid.from_experiment(experiment)
        if experiment == path:
            if len(grid) != 1:
                raise ValueError(f"Result.from_path: {path} holds {len(grid)} trials; give "
                                 "a trial's directory")
            return grid[0]
        for result in grid:
            if os.path.abspath(result.path).rstrip("/") == path:
                return result
        raise ValueError(f"Result.from_path: no trial of {experiment} has the directory {path}")

    @classmethod
    def _from_data(cls, d, objects=None):
        config = d["config"] if objects is None else _values.decode(d["config"], objects)
        return cls(metrics=d["metrics"], config=config,
                   checkpoint=Checkpoint(d["checkpoint"]) if d["checkpoint"] else None,
                   path=d["path"], error=_error(d["error"], d["path"]) if d["error"] else None,
                   trial_id=d["trial_id"], status=d["status"],
                   best_checkpoints=[(Checkpoint(p), r) for p, r in d["best_checkpoints"]],
                   history=d["history"])


def _flat(metrics):
    """A result as one row, as Ray's progress.csv: nested dicts as "a/b" keys."""
    out = {}
    for key, value in metrics.items():
        _flatten(key, value, out)
    return out


def _flatten(prefix, value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}/{k}", v, out)
    else:
        out[prefix] = value


def _stored_objects(path):
    """The param_space's objects the experiment in `path` stored, or None."""
    from tunerun import _reference
    file = os.path.join(path, _reference.OBJECTS_FILE)
    if not os.path.exists(file):
        return None
    import pickle
    with open(file, "rb") as f:
        return pickle.load(f)


class ResultGrid:
    def __init__(self, data, objects=None):
        """objects: the param_space's non-JSON values (tune/_values.py) the
        configs' placeholders stand for; None: those the experiment stored."""
        self._data = data
        if objects is None:
            objects = _stored_objects(data.experiment_path)
        self._results = [Result._from_data(data.result(i), objects or [])
                         for i in range(len(data))]

    @classmethod
    def from_experiment(cls, path, objects=None):
        return cls(_tunerun.ResultGridData.from_experiment(str(path)), objects)

    def __len__(self):
        return len(self._results)

    def __getitem__(self, i) -> Result:
        return self._results[i]

    def __iter__(self):
        return iter(self._results)

    @property
    def experiment_path(self) -> str:
        return self._data.experiment_path

    @property
    def errors(self) -> List[TrialError]:
        return [r.error for r in self._results if r.error is not None]

    @property
    def num_errors(self) -> int:
        return self._data.num_errors

    @property
    def num_terminated(self) -> int:
        return self._data.num_terminated

    def get_best_result(self, metric=None, mode=None, scope="last",
                        filter_nan_and_inf=True) -> Result:
        """The best trial by `metric`/`mode` (default: TuneConfig's) over `scope`
        ("last", "avg", "last-5-avg", "last-10-avg", "all"). ValueError without a
        metric, RuntimeError when no trial has a usable value. With several
        objectives (TuneConfig(metric=[...])) there is no one best: `metric`
        names the objective to judge by (its mode is that objective's unless
        given), else ValueError lists them; get_pareto_front() has the
        trade-offs."""
        if mode not in (None, "min", "max"):
            raise ValueError(f'mode must be "min" or "max", got {mode!r}')
        index = self._data.best_index(metric or "", mode or "", scope, filter_nan_and_inf)
        return self._results[index]

    def get_pareto_front(self) -> List[Result]:
        """Several objectives: the trials on the Pareto front (the store's
        pareto_front view, rank 0), in trial order: of the trials whose last
        result is feasible (its "constraints" all <= 0) and has every
        objective, those no other trial beats in every objective. Not in Ray."""
        return [self._results[i] for i in self._data.pareto_front_indices()]

    def get_dataframe(self, filter_metric=None, filter_mode=None):
        """One row per trial: its last metrics (or, with filter_metric, its best
        row by that metric and filter_mode; nested dicts as "a/b" columns),
        config/<key> columns and logdir."""
        import pandas
        if (filter_metric is None) != (filter_mode is None):
            raise ValueError("give both filter_metric and filter_mode, or neither")
        rows = []
        for r in self._results:
            row = r.metrics
            if filter_metric is not None:
                scored = [h for h in r.history if isinstance(h.get(filter_metric), (int, float))
                          and not math.isnan(h[filter_metric])]
                if scored:
                    pick = max if filter_mode == "max" else min
                    row = pick(scored, key=lambda h: h[filter_metric])
            row = _flat(row)
            _flatten("config", r.config, row)
            row["logdir"] = r.path
            row.setdefault("trial_id", r.trial_id)
            rows.append(row)
        return pandas.DataFrame(rows)


def load(path) -> ResultGrid:
    """tunerun.load: the results of the experiment in `path`
    (<storage_path>/<name>), run by tune.Tuner or by the `tunerun` CLI. Ray's
    ExperimentAnalysis differs: here it is a ResultGrid (get_best_result,
    get_dataframe, iteration over trials)."""
    return ResultGrid.from_experiment(path)
