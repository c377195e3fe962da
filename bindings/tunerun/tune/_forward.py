"""Results of a run nested in a trial (tune/_nesting.py), reported to the
trial as they come: a callback of the nested controller, which runs in the
trial's process, calls the trial's train.report() with each result of the
nested trial's rank 0. A stop or pause of the outer trial raises StopTrial
there; it ends the nested fit() (its ranks torn down) and the trial's
function with it."""

import os

from tunerun.tune import _nesting

CHECKPOINT_PATH_KEY = "checkpoint_path"


class Forwarder:
    """with_checkpoints: a result's checkpoint becomes the outer trial's
    (copied into it); else, as Ray's TuneReportCallback, its directory is
    reported under "checkpoint_path"."""

    def __init__(self, with_checkpoints):
        self.with_checkpoints = with_checkpoints
        self.experiment_path = None  # the nested experiment's directory (Callback.setup)

    def forward(self, trial_id, result):
        from tunerun.train import session
        from tunerun.train.checkpoint import Checkpoint
        metrics = {k: v for k, v in result.items() if k not in _nesting.AUTO_FILLED}
        checkpoint = self._checkpoint_dir(trial_id, result.get("training_iteration"))
        if checkpoint is not None and not self.with_checkpoints:
            metrics[CHECKPOINT_PATH_KEY] = checkpoint
            checkpoint = None
        session.report(metrics, checkpoint=Checkpoint(checkpoint) if checkpoint else None)

    def _checkpoint_dir(self, trial_id, iteration):
        """The nested trial's checkpoint of this iteration (published before
        the controller sees the result), or None."""
        if self.experiment_path is None or not isinstance(iteration, int):
            return None
        path = os.path.join(self.experiment_path, "trials", trial_id,
                            f"checkpoint_{iteration:06d}")
        return path if os.path.isdir(path) else None
