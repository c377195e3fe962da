"""tune.Trainable (class trainables) and tune.with_parameters, as Ray Tune's.

A class trainable runs in its worker process as a function trainable would:
one instance per trial run, `step()` per iteration, each result reported.
Checkpoints follow RunConfig's CheckpointConfig: every
`checkpoint_frequency` iterations, and at the end (`checkpoint_at_end`,
default True here) when the trial ends by itself (a result with done=True)
or reaches RunConfig.stop's training_iteration; after a step whose result
holds should_checkpoint=True (Ray's tune.result.SHOULD_CHECKPOINT). And
wherever the scheduler may pause the trial or let PBT clone it
(train.should_checkpoint(): PBT's perturbation points, HyperBand's
milestones), as Ray saves a trial it pauses; an interrupt or a failure
resumes from the latest checkpoint, so give a checkpoint_frequency for
those. Like a function, the class reaches the ranks by cloudpickle
(tunerun/_reference.py).

With reuse_actors (TuneConfig), a rank that ran a trial to its end (or to a
scheduler's stop) keeps its instance for the next trial it runs, as Ray's
actor reuse: the instance gets the new config (self.config, trial_id and
iteration 0), then reset_config(new_config); True: it runs the trial
without setup() (and load_checkpoint() if the trial resumes). False (the
default): where we differ from Ray, which fails the trial, the old instance
is cleaned up and a new one set up in the same process. An instance whose
trial raised is cleaned up, never reused. An instance is kept only when its
class overrides reset_config (else cleanup() runs at the trial's end); a
kept one is cleaned up at the rank's exit, which the rank's end after fit()
may skip (a known gap: Ray cleans up when the actor stops).
"""

import atexit
import copy
import json
import os
import pickle
import tempfile

from tunerun import _reference, _tunerun
from tunerun.train import session
from tunerun.train.checkpoint import Checkpoint

_DICT_FILE = ".tunerun_checkpoint.pkl"  # what save_checkpoint returned, when a dict
_STATE_FILE = ".tunerun_trainable.json"  # the iteration a checkpoint was taken at


class Trainable:
    """Subclass it and override setup(config, **parameters), step() -> dict,
    and, to checkpoint, save_checkpoint(checkpoint_dir) -> None | dict | a path
    inside checkpoint_dir and load_checkpoint(checkpoint_dir, that dict or
    that path); cleanup() runs at the end."""

    def __init__(self, config=None, **parameters):
        self.config = config or {}
        self._iteration = 0
        self._set_context()
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
        """Called on a kept instance, with reuse_actors, before it runs another
        trial (self.config is new_config already). Return True if this
        instance can run it without setup(); False (default) for a new one."""
        return False

    def _reset(self, config):
        """Ray's Trainable.reset: the new trial's config and identity, then
        reset_config; iteration from 0 (a checkpoint may set it)."""
        self.config = config
        self._set_context()
        if not self.reset_config(config):
            return False
        self._iteration = 0
        return True

    def _set_context(self):
        context = session.get_context() if _tunerun.is_worker() else None
        self._trial_id = context.get_trial_id() if context else "default"
        self._trial_name = context.get_trial_name() if context else "default"
        self._logdir = context.get_trial_dir() if context else tempfile.gettempdir()


# With reuse_actors: (instance, its parameters) that the rank's last trial left.
_kept = None
_cleanup_registered = False


def _instance(cls, config, parameters):
    """The trial's instance: the kept one if it resets to `config`, else new."""
    global _kept
    kept, _kept = _kept, None
    if kept is not None:
        trainable, kept_parameters = kept
        # with_parameters' values are one object per process; compared by identity.
        same_parameters = kept_parameters is parameters or not (kept_parameters or parameters)
        if type(trainable) is cls and same_parameters and trainable._reset(config):
            return trainable
        trainable.cleanup()
    return cls(config, **parameters)


def _cleanup_kept():
    global _kept
    if _kept is not None:
        kept, _kept = _kept[0], None
        kept.cleanup()


def run_class(cls, config, parameters, options):
    """The worker's loop for a class trainable; options: checkpoint_frequency,
    checkpoint_at_end, max_iteration (RunConfig.stop's training_iteration)."""
    global _kept, _cleanup_registered
    # An instance is kept for the rank's next trial only when it may take
    # it (reset_config overridden); else cleanup() runs at the trial's end, as Ray's.
    reuse = (os.environ.get("TUNERUN_REUSE") == "1"
             and getattr(cls, "reset_config", None) is not Trainable.reset_config)
    trainable = _instance(cls, config, parameters) if reuse else cls(config, **parameters)
    keep = False
    try:
        ckpt = session.get_checkpoint()
        if ckpt is not None:
            with open(os.path.join(ckpt.path, _STATE_FILE)) as f:
                state = json.load(f)
            trainable._iteration = state["iteration"]
            saved = os.path.join(ckpt.path, _DICT_FILE)
            if os.path.exists(saved):
                with open(saved, "rb") as f:
                    trainable.load_checkpoint(pickle.load(f))
            elif state.get("path"):  # save_checkpoint returned a path inside its directory
                trainable.load_checkpoint(os.path.join(ckpt.path, state["path"]))
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
            if ((frequency and trainable._iteration % frequency == 0) or (done and at_end)
                    or result.get("should_checkpoint") or session.should_checkpoint()):
                _report_with_checkpoint(trainable, result)
            else:
                session.report(result)
            if done:
                keep = reuse
                return
    except _tunerun.StopTrial:
        keep = reuse  # stopped by the controller: the instance is sound
        raise
    except session.TrialDone:
        keep = reuse  # step() returned done=True: its result was the last
    finally:
        if keep:
            if not _cleanup_registered:
                atexit.register(_cleanup_kept)
                _cleanup_registered = True
            _kept = (trainable, parameters)
        else:
            trainable.cleanup()


def _report_with_checkpoint(trainable, result):
    with tempfile.TemporaryDirectory(prefix="tunerun-trainable-") as d:
        saved = trainable.save_checkpoint(d)
        state = {"iteration": trainable._iteration}
        if isinstance(saved, dict):
            # cloudpickle: the dict may hold objects of the script's classes.
            data = _reference.dumps(saved, f"{type(trainable).__name__}.save_checkpoint's dict")
            with open(os.path.join(d, _DICT_FILE), "wb") as f:
                f.write(data)
        elif saved is not None:
            state["path"] = _inside(trainable, saved, d)
        with open(os.path.join(d, _STATE_FILE), "w") as f:
            json.dump(state, f)
        session.report(result, checkpoint=Checkpoint.from_directory(d))


def _inside(trainable, saved, checkpoint_dir):
    """The path save_checkpoint returned, relative to its checkpoint_dir ("" for
    the directory itself). As Ray's (2.0-2.6), load_checkpoint gets the same
    path under the directory the checkpoint is restored to."""
    relative = None
    if isinstance(saved, (str, os.PathLike)):
        relative = os.path.relpath(os.path.abspath(saved), os.path.abspath(checkpoint_dir))
    if relative is None or relative == os.pardir or relative.startswith(os.pardir + os.sep):
        raise ValueError(f"{type(trainable).__name__}.save_checkpoint returned {saved!r}: "
                         "expected None, a dict, or a path inside the checkpoint_dir it was "
                         f"given ({checkpoint_dir})")
    return "" if relative == os.curdir else relative


class _WithParameters:
    """tune.with_parameters(trainable, **kwargs): the trainable called with
    the keyword arguments: trainable(config, **kwargs), or for a class
    setup(config, **kwargs). The values are pickled (cloudpickle) when
    with_parameters is called, written once per experiment beside it
    (<storage_path>/<name>/with_parameters.pkl) and unpickled once in each
    worker process. Calling the wrapper calls the function with them (a
    wrapper inside another callable travels inside it)."""

    def __init__(self, trainable, kwargs):
        self.trainable = trainable
        self.payload = _reference.dumps(kwargs, "with_parameters: the parameters")
        self._kwargs = None

    def __getstate__(self):
        return {**self.__dict__, "_kwargs": None}

    def __call__(self, config, **more):
        if self._kwargs is None:
            self._kwargs = pickle.loads(self.payload)
        return self.trainable(config, **self._kwargs, **more)


def with_parameters(trainable, **kwargs):
    return _WithParameters(trainable, kwargs)
