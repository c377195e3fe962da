"""tune.Callback and tune.Stopper in Python, called by the C++ controller
with the GIL held, on its event loop: a slow hook delays every trial. An
exception in one ends fit() with it (the experiment stays restorable).

A hook may take Ray's arguments, a Trial record (tune.experiment.Trial:
trial_id, status, config, last_result, local_path, trainable_name) and
the list of every trial seen so far:
    on_trial_start(iteration, trials, trial, **info)
    on_trial_result(iteration, trials, trial, result, **info)
    on_trial_complete(iteration, trials, trial, **info)
    on_trial_error(iteration, trials, trial, **info)
    on_experiment_end(trials, **info)                  after the run
    on_checkpoint(iteration, trials, trial, checkpoint, **info)
                          after on_trial_result, when that result came with a
                          checkpoint (a train.Checkpoint of the trial's copy)
or tunerun's plain values, which need no records:
    on_trial_start(trial_id, config)
    on_trial_result(trial_id, config, result)
    on_trial_complete(trial_id, config, last_result)   (None: it reported nothing)
    on_trial_error(trial_id, config, error)            (the error message)
A hook whose parameters include `iteration` or `trials` gets Ray's. Both get
    setup(stop=, num_samples=, total_num_samples=, experiment_path=)  once.
Where we differ from Ray: `iteration` counts the hook calls, not the
controller's steps; on_step_begin/end, on_trial_save/restore/recover are not
called (a callback that overrides one is warned); and setting
result["should_checkpoint"] in on_trial_result does not reach the trial (a
warning says so; checkpoint from the trainable instead).
"""

import os
import sys
import warnings

from tunerun.tune.experiment import _record

_HOOKS = ("on_trial_start", "on_trial_result", "on_trial_complete", "on_trial_error")
_NEVER_CALLED = ("on_step_begin", "on_step_end", "on_trial_save", "on_trial_restore",
                 "on_trial_recover")


class Callback:
    def setup(self, stop=None, num_samples=None, total_num_samples=None, **info):
        """Called once before the run, as Ray's; info holds experiment_path."""

    def on_trial_start(self, trial_id, config):
        pass

    def on_trial_result(self, trial_id, config, result):
        pass

    def on_trial_complete(self, trial_id, config, last_result):
        pass

    def on_trial_error(self, trial_id, config, error):
        pass

    def on_experiment_end(self, trials, **info):
        pass

    def on_checkpoint(self, iteration, trials, trial, checkpoint, **info):
        pass


def _takes_ray_arguments(hook):
    import inspect  # here: a rank that imports tune.Callback need not load it
    try:
        parameters = inspect.signature(hook).parameters
    except (TypeError, ValueError):
        return False
    return "iteration" in parameters or "trials" in parameters


def _with_ray_hooks(callback, trainable_name):
    """The callback as the controller calls it: itself, or _RayHooks over it
    when one of its trial hooks takes Ray's arguments."""
    overridden = [h for h in _NEVER_CALLED if callable(getattr(callback, h, None))]
    if overridden:
        warnings.warn(f"tunerun: {type(callback).__name__}.{', '.join(overridden)} will not be "
                      "called (tunerun has no such event; on_trial_result and on_checkpoint "
                      "are)", stacklevel=3)
    if (any(_takes_ray_arguments(getattr(callback, hook)) for hook in _HOOKS)
            or _overrides(callback, "on_checkpoint")):
        return _RayHooks(callback, trainable_name)
    return callback


def _overrides(callback, hook):
    own = getattr(type(callback), hook, None)
    return own is not None and own is not getattr(Callback, hook)


class _RayHooks(Callback):
    """Calls the callback's hooks, each with the arguments it takes: Ray's
    (Trial records) or tunerun's plain values."""

    def __init__(self, callback, trainable_name):
        self._callback = callback
        self._ray = {hook: _takes_ray_arguments(getattr(callback, hook)) for hook in _HOOKS}
        self._trainable_name = trainable_name
        self._records = {}
        self._iteration = 0
        self._experiment_path = None
        self._warned = False

    def setup(self, **info):
        self._experiment_path = info.get("experiment_path")
        self._callback.setup(**info)

    def _call(self, hook, plain, trial_id, config, status, result, *extra):
        method = getattr(self._callback, hook)
        if not self._ray[hook]:
            return method(*plain)
        trial = _record(self._records, trial_id, config, status, result, self._experiment_path)
        trial.trainable_name = self._trainable_name
        self._iteration += 1
        return method(self._iteration, list(self._records.values()), trial, *extra)

    def on_trial_start(self, trial_id, config):
        self._call("on_trial_start", (trial_id, config), trial_id, config, "RUNNING", None)

    def on_trial_result(self, trial_id, config, result):
        asked = result.get("should_checkpoint")
        self._call("on_trial_result", (trial_id, config, result), trial_id, config, "RUNNING",
                   result, result)
        self._checkpoint(trial_id, config, result)
        if result.get("should_checkpoint") and not asked and not self._warned:
            self._warned = True
            print(f"tunerun: {type(self._callback).__name__} set result['should_checkpoint']; a "
                  "callback cannot make a trial checkpoint here (return should_checkpoint=True "
                  "from the trainable's step(), or set CheckpointConfig(checkpoint_frequency=))",
                  file=sys.stderr)

    def _checkpoint(self, trial_id, config, result):
        """on_checkpoint when this result's checkpoint is in the trial's
        directory (the trial writes checkpoint_<iteration> before the
        result reaches the controller)."""
        if not _overrides(self._callback, "on_checkpoint") or self._experiment_path is None:
            return
        trial = _record(self._records, trial_id, config, "RUNNING", result,
                        self._experiment_path)
        path = os.path.join(trial.local_path,
                            f"checkpoint_{int(result.get('training_iteration', 0)):06d}")
        if os.path.isdir(path):
            from tunerun.train import Checkpoint
            trial.checkpoint = Checkpoint(path)
            self._iteration += 1
            self._callback.on_checkpoint(self._iteration, list(self._records.values()), trial,
                                         trial.checkpoint)

    def on_trial_complete(self, trial_id, config, last_result):
        self._call("on_trial_complete", (trial_id, config, last_result), trial_id, config,
                   "TERMINATED", last_result)

    def on_trial_error(self, trial_id, config, error):
        self._call("on_trial_error", (trial_id, config, error), trial_id, config, "ERROR", None)

    def on_experiment_end(self, trials, **info):
        self._callback.on_experiment_end(trials, **info)


class Stopper:
    """RunConfig(stop=...) also takes a function (trial_id, result) -> bool."""

    def __call__(self, trial_id, result) -> bool:
        return False

    def stop_all(self) -> bool:
        return False
