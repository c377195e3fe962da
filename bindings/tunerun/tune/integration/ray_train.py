"""Ray's tune.integration.ray_train: TuneReportCallback, which a TorchTrainer
fitted inside a Tune trial (Ray Train's "train driver" function) takes in
its RunConfig(callbacks=) to report its results to the trial.

    def train_driver_fn(config):
        TorchTrainer(train_fn_per_worker, train_loop_config=config["train_loop_config"],
                     scaling_config=ScalingConfig(num_workers=2),
                     run_config=RunConfig(callbacks=[TuneReportCallback()])).fit()

    tune.Tuner(tune.with_resources(train_driver_fn, ScalingConfig(num_workers=2)), ...)
"""

from tunerun.tune import _nesting
from tunerun.tune._forward import CHECKPOINT_PATH_KEY, Forwarder  # noqa: F401
from tunerun.tune.callback import Callback


class TuneReportCallback(Callback):
    """Reports each result of the trainer's rank 0 to the enclosing Tune trial
    (train.report in the trial's process), as Ray's: the metrics the ranks
    reported (not the trainer's own training_iteration, times and ids: the
    trial gets its own), and, when the result came with a checkpoint, its
    directory under "checkpoint_path" (the checkpoint is not reported again).
    When the Tune trial is stopped (a scheduler, a stopper), the trainer's
    fit() ends at its next result and the stop reaches the trial's function.
    RuntimeError outside a Tune trial, as Ray's."""

    def __init__(self):
        if not _nesting.in_trial():
            raise RuntimeError("TuneReportCallback must be used in a Tune session.")
        self._forwarder = Forwarder(with_checkpoints=False)

    def setup(self, stop=None, num_samples=None, total_num_samples=None, **info):
        self._forwarder.experiment_path = info.get("experiment_path")

    def on_trial_result(self, trial_id, config, result):
        self._forwarder.forward(trial_id, result)
