"""What a train function calls inside a worker: report, get_checkpoint,
should_checkpoint, get_context (Ray Train's TrainContext). Outside a worker each raises
RuntimeError. shutil and tempfile are imported where used: a rank that never
checkpoints starts without them."""

from tunerun import _rank_context, _tunerun
from tunerun.train.checkpoint import Checkpoint
from tunerun.tune.placement_groups import PlacementGroupFactory


def report(metrics=None, *, checkpoint=None, **kwargs):
    """Reports one iteration's metrics (every rank calls it the same number of
    times; rank 0's metrics are kept) and optionally a checkpoint, whose files
    are copied (the directory stays yours) and merged with the other ranks'
    for this iteration: use rank-specific names when ranks save different
    files. A report with a checkpoint blocks until the controller has
    decided; one without returns at once, and its decision lands at the next
    report (train/session.h in the C++ tree says what this promises). When
    the controller stops the trial, report() raises StopTrial, which must
    propagate. `report(loss=...)` (Ray 1.x) works too.
    A report with done=True is the trial's last, as Ray's: report() then
    raises TrialDone, which the worker takes as the function's normal end (in
    a trainer, every rank reports done=True at the same report)."""
    global _pending
    metrics = dict(metrics or {}, **kwargs)
    if checkpoint is None and _pending is not None:  # tune.checkpoint_dir's, as Ray 1.x
        checkpoint, _pending = _pending, None
    staged = None
    if checkpoint is not None:
        import shutil
        staged = _tunerun.make_checkpoint_dir()
        shutil.copytree(checkpoint.path, staged, dirs_exist_ok=True)
        if getattr(checkpoint, "_temporary", False):  # a folder from_dict/from_state_dict made
            shutil.rmtree(checkpoint.path, ignore_errors=True)
    try:
        _tunerun.report(metrics, staged)
    except (ValueError, TypeError):
        # A value that is not JSON: kept as JSON where it converts, else as
        # its text (tune/_values.py); a second failure is the call's own.
        from tunerun.tune import _values
        _tunerun.report(_values.as_metrics(metrics), staged)
    if metrics.get("done") is True:
        raise TrialDone


class TrialDone(BaseException):
    """Raised by report() after a result with done=True: the trial ends there
    (TERMINATED). Let it propagate, as StopTrial."""


# Ray 1.x's tune.checkpoint_dir: the checkpoint written since the last report.
_pending = None


class _CheckpointDir:
    def __enter__(self):
        import tempfile
        self.path = tempfile.mkdtemp(prefix="checkpoint_")
        return self.path

    def __exit__(self, error_type, *exc):
        global _pending
        import shutil
        if error_type is not None:
            shutil.rmtree(self.path, ignore_errors=True)
            return False
        if _pending is not None:  # two without a report between: the later one counts
            shutil.rmtree(_pending.path, ignore_errors=True)
        _pending = Checkpoint(self.path)
        _pending._temporary = True  # report() removes the directory once copied
        return False


def _drop_pending():
    """A new trial in this process: a checkpoint no report took is removed."""
    global _pending
    if _pending is not None:
        import shutil
        shutil.rmtree(_pending.path, ignore_errors=True)
        _pending = None


def checkpoint_dir(step=None):
    """Ray 1.x's `with tune.checkpoint_dir(step=...) as d:` a new directory to
    write a checkpoint into; the next report() (tune.report(**metrics))
    publishes it, as Ray 1.x saved it with that result. A function taking a
    `checkpoint_dir` argument gets the directory it resumes from (else None)."""
    return _CheckpointDir()


def get_checkpoint():
    """The checkpoint this run resumes from (after a pause, a failure, a
    restore, or a PBT exploit); on a fresh start, a TorchTrainer's
    resume_from_checkpoint, else None. Read-only."""
    path = _tunerun.get_checkpoint() or _rank_context.initial_checkpoint()
    return Checkpoint(path) if path else None


def should_checkpoint():
    """Not in Ray: True when the scheduler may pause the trial at the next
    report (to resume it from that report's checkpoint) or let PBT clone it
    there; False where it cannot (between HyperBand's milestones or PBT's
    perturbation points, and always under FIFO, ASHA or the median stopping
    rule, which never pause). A function that checkpoints only for pausing
    and cloning passes a checkpoint exactly when this is True; call it right
    before report(). It waits for the previous report's decision when that
    one is unknown, so it may raise StopTrial as report() does."""
    return _tunerun.should_checkpoint()


class TrainContext:
    """The calling rank's trial. Outside a trial (data None) every getter
    warns and returns None, as Ray 2.x's does."""

    def __init__(self, data):
        self._d = data

    def __getattribute__(self, name):
        if name.startswith("get_") and object.__getattribute__(self, "_d") is None:
            return _outside(name)
        return object.__getattribute__(self, name)

    def get_world_rank(self):
        return self._d["world_rank"]

    def get_world_size(self):
        return self._d["world_size"]

    def get_local_rank(self):
        return self._d["local_rank"]

    def get_local_world_size(self):
        return self._d["local_world_size"]

    def get_node_rank(self):
        return self._d["node_rank"]

    def get_trial_id(self):
        return self._d["trial_id"]

    def get_trial_name(self):
        return self._d["trial_name"]

    def get_trial_dir(self):
        return self._d["trial_dir"]

    def get_experiment_name(self):
        return self._d["experiment"]

    def get_trial_resources(self):
        """The trial's resources as Ray's PlacementGroupFactory: one bundle per
        rank ({"CPU": n, "GPU": m}); Ray's trainers add an empty head bundle."""
        return PlacementGroupFactory(_rank_context.bundles() or [{"CPU": 1}])

    def get_attempt(self):
        """Not in Ray: 0 for a trial's first run, +1 per restart."""
        return self._d["attempt"]


def get_context() -> TrainContext:
    try:
        return TrainContext(_tunerun.get_context())
    except RuntimeError:  # not in a trial's rank
        return TrainContext(None)


def _outside(name):
    def getter(*args, **kwargs):
        import warnings
        warnings.warn(f"`{name}` is meant to only be called inside a function that is "
                      "executed by a Tuner or Trainer. Returning `None`.", stacklevel=2)
        return None
    return getter


StopTrial = _tunerun.StopTrial
