"""tune.Trainable (class trainables) and tune.with_parameters, as Ray Tune's.

A class trainable runs in its worker process as a function trainable would:
one instance per trial run, `step()` per iteration, each result reported.
Checkpoints follow RunConfig's CheckpointConfig: every
`checkpoint_frequency` iterations, and at the end (`checkpoint_at_end`,
default True here) when the trial ends by itself (a result with done=True)
or reaches RunConfig.stop's training_iteration. Unlike Ray, a PAUSE or a
controller stop does not checkpoint on demand: a paused trial resumes from
its latest checkpoint, so give PBT and pausing schedulers a
checkpoint_frequency. Like a function, the class obeys the one rule of
tunerun/_reference.py (defined at the top level of a module or script).
"""

import copy
import json
import os
import pickle
import tempfile

_DICT_FILE = ".tunerun_checkpoint.pkl"  # what save_checkpoint returned, when a dict
_STATE_FILE = ".tunerun_trainable.json"  # the iteration a checkpoint was taken at


class Trainable:
    """Subclass it and override setup(config, **parameters), step() -> dict,
    and, to checkpoint, save_checkpoint(checkpoint_dir) -> None | dict and
    load_checkpoint(checkpoint_dir or that dict); cleanup() runs at the end."""

    def __init__(self, config=None, **parameters):
        from tunerun import train
        self.config = config or {}
        self._iteration = 0
        context = train.get_context() if _in_worker() else None
        self._trial_id = context.get_trial_id() if context else "default"
        self._trial_name = context.get_trial_name() if context else "default"
        self._logdir = context.get_trial_dir() if context else tempfile.gettempdir()
        self.setup(copy.deepcopy(self.config), **parameters)

    @property
    def iteration(self):
        return self._iteration

    training_iteration = iteration

    @property
    def trial_id(self):
        return self._trial_id

    @property
    def trial_name(self):
        return self._trial_name

    @property
    def logdir(self):
        return self._logdir

    def setup(self, config, **parameters):
        pass

    def step(self):
        raise NotImplementedError(f"{type(self).__name__}.step")

    def save_checkpoint(self, checkpoint_dir):
        return None

    def load_checkpoint(self, checkpoint):
        pass

    def cleanup(self):
        pass

    def reset_config(self, new_config):
        return False


def _in_worker():
    from tunerun import _tunerun
    return _tunerun.is_worker()


def run_class(cls, config, parameters, options):
    """The worker's loop for a class trainable; options: checkpoint_frequency,
    checkpoint_at_end, max_iteration (RunConfig.stop's training_iteration)."""
    from tunerun import train
    trainable = cls(config, **parameters)
    try:
        ckpt = train.get_checkpoint()
        if ckpt is not None:
            with open(os.path.join(ckpt.path, _STATE_FILE)) as f:
                trainable._iteration = json.load(f)["iteration"]
            saved = os.path.join(ckpt.path, _DICT_FILE)
            if os.path.exists(saved):
                with open(saved, "rb") as f:
                    trainable.load_checkpoint(pickle.load(f))
            else:
                trainable.load_checkpoint(ckpt.path)
        frequency = options.get("checkpoint_frequency") or 0
        at_end = options.get("checkpoint_at_end", True)
        max_iteration = options.get("max_iteration")
        while True:
            result = trainable.step()
            if not isinstance(result, dict):
                raise TypeError(f"{cls.__name__}.step() returned {result!r}: expected a dict")
            trainable._iteration += 1
            done = bool(result.get("done")) or trainable._iteration == max_iteration
            if (frequency and trainable._iteration % frequency == 0) or (done and at_end):
                _report_with_checkpoint(trainable, result)
            else:
                train.report(result)
            if done:
                return
    finally:
        trainable.cleanup()


def _report_with_checkpoint(trainable, result):
    from tunerun import train
    with tempfile.TemporaryDirectory(prefix="tunerun-trainable-") as d:
        saved = trainable.save_checkpoint(d)
        if isinstance(saved, dict):
            with open(os.path.join(d, _DICT_FILE), "wb") as f:
                pickle.dump(saved, f)
        elif saved is not None and os.path.abspath(saved) != os.path.abspath(d):
            raise ValueError(f"{type(trainable).__name__}.save_checkpoint returned {saved!r}: "
                             "expected None, a dict, or the checkpoint_dir it was given")
        with open(os.path.join(d, _STATE_FILE), "w") as f:
            json.dump({"iteration": trainable._iteration}, f)
        train.report(result, checkpoint=train.Checkpoint.from_directory(d))


class _WithParameters:
    """tune.with_parameters(trainable, **kwargs): the trainable called with
    the keyword arguments: trainable(config, **kwargs), or for a class
    setup(config, **kwargs). The values are pickled once, stored beside the
    experiment (<storage_path>/<name>/with_parameters.pkl) and unpickled in
    each worker process; they must be picklable."""

    def __init__(self, trainable, kwargs):
        self.trainable = trainable
        try:
            self.payload = pickle.dumps(kwargs)
        except Exception as e:
            raise ValueError(f"with_parameters: the parameters cannot be pickled "
                             f"({type(e).__name__}: {e}); they travel to the workers "
                             "by pickle") from None


def with_parameters(trainable, **kwargs):
    return _WithParameters(trainable, kwargs)
