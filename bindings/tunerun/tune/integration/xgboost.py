"""Ray Tune's XGBoost callbacks: xgboost.train(..., callbacks=[...]) inside
a trainable reports each boosting round's evaluation results (and saves the
booster as a checkpoint). Metric names are Ray's, "<eval name>-<metric>"
("validation-logloss"); `metrics` renames or picks them. Imports xgboost."""

import os
import tempfile

from xgboost.callback import TrainingCallback

from tunerun.train.checkpoint import Checkpoint
from tunerun.train.session import report


class TuneReportCheckpointCallback(TrainingCallback):
    """Reports after every round (`frequency` rounds between checkpoints;
    0: none but the last when checkpoint_at_end). metrics: None (all), a
    name or list of "<eval>-<metric>" names, or {reported name: that name}.
    results_postprocessing_fn(dict) -> dict runs on what is reported."""

    CHECKPOINT_NAME = "model.json"

    def __init__(self, metrics=None, filename=CHECKPOINT_NAME, frequency=0,
                 checkpoint_at_end=True, results_postprocessing_fn=None):
        if isinstance(metrics, str):
            metrics = [metrics]
        self._metrics = metrics
        self._filename = filename
        self._frequency = frequency
        self._checkpoint_at_end = checkpoint_at_end
        self._postprocess = results_postprocessing_fn
        self._last = None  # the last round's report, its checkpoint not yet written

    @classmethod
    def get_model(cls, checkpoint, filename=CHECKPOINT_NAME):
        """The Booster a checkpoint of this callback holds."""
        import xgboost
        booster = xgboost.Booster()
        with checkpoint.as_directory() as path:
            booster.load_model(os.path.join(path, filename))
        return booster

    def _results(self, evals_log):
        flat = {f"{data}-{metric}": values[-1] if not isinstance(values[-1], tuple)
                else values[-1][0]
                for data, metrics in evals_log.items() for metric, values in metrics.items()}
        if self._metrics is None:
            out = flat
        elif isinstance(self._metrics, dict):
            out = {name: flat[key] for name, key in self._metrics.items()}
        else:
            out = {key: flat[key] for key in self._metrics}
        if self._postprocess is not None:
            out = self._postprocess(out)
        return out

    def _report(self, model, results, checkpoint):
        if not checkpoint:
            report(results)
            return
        with tempfile.TemporaryDirectory() as directory:
            model.save_model(os.path.join(directory, self._filename))
            report(results, checkpoint=Checkpoint.from_directory(directory))

    def after_iteration(self, model, epoch, evals_log):
        results = self._results(evals_log)
        checkpoint = self._frequency > 0 and (epoch + 1) % self._frequency == 0
        self._last = None if checkpoint else results
        self._report(model, results, checkpoint)
        return False

    def after_training(self, model):
        # Ray's: the final booster is checkpointed with the last round's
        # results, a report of its own, when the last round had none.
        if self._checkpoint_at_end and self._last is not None:
            self._report(model, self._last, True)
        return model


class TuneReportCallback(TuneReportCheckpointCallback):
    """Reports each round's results, no checkpoints (Ray 2.0-2.6's name)."""

    def __init__(self, metrics=None, results_postprocessing_fn=None):
        super().__init__(metrics=metrics, frequency=0, checkpoint_at_end=False,
                         results_postprocessing_fn=results_postprocessing_fn)
