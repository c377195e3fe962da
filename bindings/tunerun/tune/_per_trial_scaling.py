"""A ScalingConfig per trial: Tuner(TorchTrainer(...), param_space={
"scaling_config": ScalingConfig(num_workers=tune.grid_search([1, 2]))}).

Every trial of an experiment runs the same number of ranks in the engine,
so such a Tuner runs each trial as one process that fits the trainer with
the trial's ScalingConfig inside it (tune/_nesting.py): its own group, its
own rendezvous, its results and checkpoints reported to the trial as they
come (tune/_forward.py), so schedulers, stoppers and Result see them as
Ray's do. Each trial holds the resources of the largest group the domains
can give (a trial here cannot hold more later); a restarted or resumed
trial starts the trainer from the trial's checkpoint.

Domains may be grid_search, choice, randint or sample_from over
num_workers, use_gpu, resources_per_worker's values and placement_strategy;
a sample_from or a continuous one in num_workers or the resources cannot
say its largest value and is refused.
"""

import copy
import dataclasses
import itertools

from tunerun.tune import _values
from tunerun.tune.search_space import Domain


def holds_domains(scaling):
    return _values._holds_domain(fields_of(scaling))


def fields_of(scaling):
    if isinstance(scaling, dict):
        return dict(scaling)
    return {f.name: getattr(scaling, f.name) for f in dataclasses.fields(scaling)}


def _candidates(value, where):
    """Every value `value` (holding domains) can take, for the sizing."""
    if isinstance(value, Domain):
        if value.kind in ("grid_search", "choice"):
            return list(value.args)
        if value.kind == "randint":
            return list(range(int(value.args[0]), int(value.args[1])))
        if value.kind == "qrandint":
            return list(range(int(value.args[0]), int(value.args[1]) + 1))  # a superset
        raise ValueError(f"param_space.scaling_config.{where}: a {value.kind} domain has no "
                         "largest value to reserve; give grid_search, choice or randint")
    if isinstance(value, dict):
        keys = list(value)
        options = [_candidates(value[k], f"{where}.{k}" if where else k) for k in keys]
        return [dict(zip(keys, combo)) for combo in itertools.product(*options)]
    if _values._is_domain(value):
        raise ValueError(f"param_space.scaling_config.{where}: sample_from has no largest value "
                         "to reserve; give grid_search, choice or randint")
    return [value]


def largest_group(scaling):
    """The PlacementGroupFactory-sized dict {"cpu": n, "gpu": m} of the
    largest group the ScalingConfig's domains can give."""
    from tunerun.train.config import ScalingConfig
    fields = fields_of(scaling)
    sized = {k: v for k, v in fields.items()
             if k in ("num_workers", "use_gpu", "resources_per_worker", "trainer_resources")}
    most = {}
    for combo in _candidates(sized, "")[:4096]:
        total = ScalingConfig(**combo).total_resources
        for key, value in total.items():
            most[key.lower()] = max(most.get(key.lower(), 0), value)
    return most


class PerTrialTrainer:
    """The function trainable each trial runs: fits a copy of `trainer` with
    the trial's scaling_config and train_loop_config, nested in the trial."""

    def __init__(self, trainer):
        self._trainer = trainer
        loop = trainer.train_loop_per_worker
        # Named as the trainer's function: experiment and trial names follow it.
        self.__qualname__ = getattr(loop, "__qualname__", type(loop).__qualname__)
        self.__module__ = getattr(loop, "__module__", None) or "__main__"

    def __call__(self, config):
        from tunerun.train import session
        from tunerun.train.config import RunConfig, ScalingConfig
        from tunerun.tune._forward import Forwarder
        from tunerun.train.base_trainer import TrainingFailedError
        from tunerun.tune.callback import Callback

        trainer = copy.copy(self._trainer)
        trainer._restore_path = None  # a fresh run in this trial (its checkpoint resumes it)
        trainer.scaling_config = ScalingConfig(**config["scaling_config"])
        trainer.train_loop_config = dict(config.get("train_loop_config") or {})
        checkpoint = session.get_checkpoint()  # the trial's, when it resumes
        if checkpoint is not None:
            trainer.resume_from_checkpoint = checkpoint
        forwarder = Forwarder(with_checkpoints=True)

        class Forward(Callback):
            def setup(self, **info):
                forwarder.experiment_path = info.get("experiment_path")

            def on_trial_result(self, trial_id, config, result):
                forwarder.forward(trial_id, result)

        trial_dir = session.get_context().get_trial_dir()
        trainer.run_config = RunConfig(name="train", storage_path=trial_dir, verbose=0,
                                       callbacks=[Forward()])
        try:
            trainer.fit()
        except TrainingFailedError as failed:
            error = failed.__cause__  # the nested Result.error
            cause = error.cause if isinstance(error.cause, Exception) else RuntimeError(str(error))
            if error.traceback:
                cause.add_note(f"(raised in a rank of the trial's trainer)\n{error.traceback}")
            raise cause from None


def with_scaling_objects(grid):
    """`grid` with each Result.config["scaling_config"] a ScalingConfig, as
    Ray's (the engine keeps its fields)."""
    from tunerun.train.config import ScalingConfig
    for result in grid:
        fields = result.config.get("scaling_config")
        if isinstance(fields, dict):
            result.config["scaling_config"] = ScalingConfig(**fields)
    return grid
