"""tune.Tuner and tune.TuneConfig, as Ray Tune 2.x's, over the C++ controller.

Differences from Ray, each deliberate:
- The trainable runs in worker processes that unpickle it (cloudpickle,
  tunerun/_reference.py); fit() raises ValueError when it does not pickle,
  and Tuner() for any bad param_space or option, naming the key, before
  anything runs.
- Results live in <storage_path>/<name>/experiment.db (SQLite); storage_path
  defaults to "runs", not ~/ray_results (~ and $VARIABLES expand, as Ray's).
- Class trainables checkpoint by CheckpointConfig only
  (tunerun/tune/trainable.py).
"""

import json
import os
import pickle
import sqlite3
import sys
import time
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Union

from tunerun import _ray, _reference, _tunerun
from tunerun.train.config import RunConfig
from tunerun.tune import _adapters, _nesting, _per_trial_scaling, _values
from tunerun.tune.callback import Callback, _with_ray_hooks
from tunerun.tune.experiment import Trial, _trials_of
from tunerun.tune.placement_groups import PlacementGroupFactory
from tunerun.tune.progress import CLIReporter, ProgressReporter
from tunerun.tune.registry import resolve_trainable
from tunerun.tune.result_grid import ResultGrid
from tunerun.tune.schedulers import TrialScheduler, _NativeScheduler
from tunerun.tune.search import Searcher, _NativeSearcher
from tunerun.tune.search_space import Domain, SampleFrom
from tunerun.tune.trainable import Trainable, _WithParameters


@dataclass
class TuneConfig:
    # A list: several objectives (tune.search.MOTPESearch or NSGA2Search, or
    # random search; ResultGrid.get_pareto_front()).
    metric: Union[str, List[str], None] = None
    mode: Union[str, List[str], None] = None  # "min" | "max", or one per metric
    search_alg: Any = None  # tune.search.*; None: BasicVariantGenerator
    scheduler: Any = None  # tune.schedulers.*; None: FIFOScheduler
    num_samples: int = 1
    max_concurrent_trials: Optional[int] = None
    time_budget_s: Optional[float] = None
    reuse_actors: bool = False  # finished trials' ranks (Python processes) run the next trials
    # Not in Ray: without reuse_actors, the next trial's fresh processes start
    # while trials run, so a trial does not wait for its processes to start.
    prestart_workers: bool = True
    # True: each trial runs in its trial directory (os.chdir), as Ray's; the
    # default (None, False) keeps the script's working directory, as Ray 2.10+.
    chdir_to_trial_dir: Optional[bool] = None
    # Not in Ray: earlier experiments' directories the searcher starts from
    # (TPE, GP-BO, MOTPE learn from their trials and run their best configs again).
    warm_start: Optional[List[str]] = None
    # Seeds the searcher (Ray: the searchers' own seeds); None: fresh entropy,
    # recorded in the experiment's spec.
    seed: Optional[int] = None
    # Ray's: functions of a Trial (trial_id, config, trainable_name,
    # experiment_tag) -> str. The name shows in CLIReporter's table; the
    # directory name replaces the trial id under <experiment>/trials/.
    trial_name_creator: Optional[Callable] = None
    trial_dirname_creator: Optional[Callable] = None


class _TrialNamer:
    """creator(Trial) -> str, called as namer(trial_id, config)."""

    def __init__(self, creator, trainable_name, objects):
        self._creator = creator
        self._trainable_name = trainable_name
        self._objects = objects  # the param_space's objects (tune/_values.py)

    def __call__(self, trial_id, config):
        trial = Trial(trial_id)
        trial.config = _values.decode(config, self._objects or [])
        trial.trainable_name = self._trainable_name
        index = trial_id.rsplit("_", 1)[-1]
        flat = ",".join(f"{k}={v}" for k, v in sorted(config.items())
                        if not isinstance(v, dict))
        trial.experiment_tag = f"{int(index) if index.isdigit() else index}_{flat}"
        name = self._creator(trial)
        if not isinstance(name, str):
            raise TypeError(f"{getattr(self._creator, '__qualname__', self._creator)} "
                            f"returned {name!r} for {trial_id}: expected a str")
        return name


class _WithResources:
    """tune.with_resources(trainable, {"cpu": 2}, a PlacementGroupFactory or a
    train.ScalingConfig): the trainable with per-rank resources (a trial is
    one process here, holding the sum of the bundles; a TorchTrainer it fits
    runs its ranks inside them). Calling it calls the trainable."""

    def __init__(self, trainable, resources):
        if hasattr(resources, "as_placement_group_factory"):  # a ScalingConfig, as Ray
            resources = resources.as_placement_group_factory()
        if isinstance(resources, PlacementGroupFactory):
            resources = resources.required_resources
        if not isinstance(resources, dict):
            raise ValueError("with_resources: resources must be a dict ({\"cpu\": 2}), a "
                             "PlacementGroupFactory or a ScalingConfig; a function of the "
                             "config is not supported (every trial gets the same resources), "
                             f"got {resources!r}")
        self.trainable = trainable
        self.resources = {k.lower(): v for k, v in resources.items()}

    def __call__(self, *args, **kwargs):
        return self.trainable(*args, **kwargs)


def _has_grid(value):
    if isinstance(value, Domain):
        return value.kind == "grid_search"
    if isinstance(value, dict):
        return any(_has_grid(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_grid(v) for v in value)
    return False


def _points_count_as_samples(spec, searcher, param_space):
    """Ray's BasicVariantGenerator counts its points_to_evaluate among the
    num_samples (4 samples and 2 points: 4 trials); the engine's runs the
    points, then num_samples. Without a grid_search, num_samples less the
    points goes to the engine, when at least one sample is left (else one
    random trial runs after the points, where Ray runs none)."""
    if type(searcher).__name__ != "BasicVariantGenerator":
        return
    points = len(spec["search"].get("points_to_evaluate") or [])
    samples = spec.get("num_samples", 1)
    if points and samples > points and not _has_grid(param_space):
        spec["num_samples"] = samples - points


def with_resources(trainable, resources):
    return _WithResources(trainable, resources)


def _names(obj):
    """(module, qualified name) of a trainable: of the function a
    functools.partial wraps, of a callable object's class."""
    import functools
    while isinstance(obj, functools.partial):
        obj = obj.func
    if not hasattr(obj, "__qualname__"):
        obj = type(obj)
    return getattr(obj, "__module__", None) or "__main__", obj.__qualname__


def _display_name(obj):
    """The trainable's name in experiment names, as Ray's: its __name__ (a
    lambda's without the brackets)."""
    return _names(obj)[1].rsplit(".", 1)[-1].strip("<>")


@dataclass
class _TrainableSpec:
    """What Tuner makes of its trainable."""
    ref: dict  # the rank's REF, without the files' paths (fit() adds them)
    spec: dict  # the spec's "trainable" section
    space: dict  # param_space entries it brings (a trainer's train_loop_config)
    display: str  # its name in experiment names and Trial.trainable_name
    payloads: list  # with_parameters' pickled kwargs, innermost first
    runs: Any  # what the ranks unpickle and run


def _trainable_spec(trainable):
    """The _TrainableSpec of what Tuner was given: with_resources and
    with_parameters wrappers at the top are taken apart here (their values
    are written once per experiment); deeper ones travel inside the object."""
    resources, payloads = None, []
    trainable = resolve_trainable(trainable)
    while isinstance(trainable, (_WithResources, _WithParameters)):
        if isinstance(trainable, _WithResources):
            resources = resources or trainable.resources  # the outermost wins
        else:
            payloads.insert(0, trainable.payload)
        trainable = trainable.trainable
    if hasattr(trainable, "_tunerun_trainer"):
        if payloads:
            raise ValueError("with_parameters: wraps a function or a tune.Trainable class, not "
                             "a trainer (give the trainer's train_loop_config instead)")
        return trainable._tunerun_trainer()
    is_class = isinstance(trainable, type)
    if is_class and not issubclass(trainable, Trainable):
        raise ValueError(f"the trainable {trainable.__qualname__} is a class but not a "
                         "tune.Trainable")
    if not callable(trainable):
        raise ValueError(f"the trainable {trainable!r} is not a function or a tune.Trainable "
                         "class")
    resources = resources or {}
    spec = {"num_workers": 1, "cpus_per_worker": resources.get("cpu", 1),
            "gpus_per_worker": int(resources.get("gpu", 0))}
    return _TrainableSpec(ref=_reference.make_reference("class" if is_class else "function"),
                          spec=spec, space={}, display=_display_name(trainable),
                          payloads=payloads, runs=trainable)


def _keyword(configs, path):
    """The value of a keyword the spec table names, "TuneConfig.seed" or
    "RunConfig.failure_config.max_failures"; paths as strings."""
    config, *attributes = path.split(".")
    value = configs[config]
    for attribute in attributes:
        value = getattr(value, attribute)
    return os.fspath(value) if isinstance(value, os.PathLike) else value


def _put(spec, key, value):
    """spec["failure"]["max_failures"] = value for the key "failure.max_failures"."""
    *sections, name = key.split(".")
    for section in sections:
        spec = spec.setdefault(section, {})
    spec[name] = value


def _merge(base, over):
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _expand(path):
    """A path as Ray takes it: ~ and $VARIABLES expanded."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    return os.path.expandvars(os.path.expanduser(path)) if isinstance(path, str) else path


_taken = set()  # <storage_path>/<name> of the experiments this process named


def _first_free(base, storage_path, exists):
    """base, else base_2, base_3...: the first name whose folder in
    storage_path no Tuner of this process took and exists(folder) denies."""
    if not isinstance(storage_path, str) or not isinstance(base, str):
        return base  # the spec's check names the bad keyword
    name, n = base, 1
    while True:
        folder = os.path.abspath(os.path.join(storage_path, name))
        if folder not in _taken and not exists(folder):
            _taken.add(folder)
            return name
        n += 1
        name = f"{base}_{n}"


def _default_name(display, storage_path):
    """Ray's default experiment name, <trainable>_<date>_<time>; a name already
    taken (a folder in storage_path, or another Tuner of this process) gets a
    suffix, so two unnamed fit() calls in the same second differ."""
    return _first_free(f"{display}_{time.strftime('%Y-%m-%d_%H-%M-%S')}", storage_path,
                       os.path.exists)


def _free_name(name, storage_path):
    """RunConfig(name=...) for a new run. Ray writes a second run of a name
    into the same folder; here an experiment is one store, so a name whose
    experiment exists (or that another Tuner of this process took) gets the
    first free suffix, _2, _3..., and says so on stderr."""
    free = _first_free(name, storage_path,
                       lambda folder: os.path.exists(os.path.join(folder, "experiment.db")))
    if free != name:
        print(f"tunerun: experiment '{name}' exists in {storage_path}; this run is '{free}' "
              f"(pick another RunConfig(name=) or remove the folder to keep the name)",
              file=sys.stderr)
    return free


def _with_trainer_scaling(trainable, param_space):
    """A trainer with param_space["scaling_config"] (Ray's way to set the
    trainer's ScalingConfig from a Tuner) as its own, and the param_space
    without it; one with domains in it, a function trainable fitting the
    trainer per trial (tune/_per_trial_scaling.py), and the param_space."""
    if hasattr(trainable, "_tuned_space"):  # a trainer's own Tuner keys (XGBoostTrainer's)
        param_space = trainable._tuned_space(param_space)
    if not isinstance(param_space, dict) or "scaling_config" not in param_space or \
            not hasattr(trainable, "_tunerun_trainer"):
        return trainable, param_space
    import copy
    from tunerun.train.config import ScalingConfig
    space = dict(param_space)
    scaling = space.pop("scaling_config")
    if not isinstance(scaling, (dict, ScalingConfig)):
        raise ValueError(f"param_space.scaling_config: expected a ScalingConfig or a dict of "
                         f"its fields, got {scaling!r}")
    if _per_trial_scaling.holds_domains(scaling):
        # A ScalingConfig per trial: each trial fits the trainer inside it.
        fields = _per_trial_scaling.fields_of(scaling)
        ScalingConfig(**{k: v for k, v in fields.items() if not _values._holds_domain(v)})
        space["scaling_config"] = fields
        space = _merge({"train_loop_config": trainable.train_loop_config}, space)
        driver = _per_trial_scaling.PerTrialTrainer(trainable)
        return with_resources(driver, _per_trial_scaling.largest_group(scaling)), space
    if isinstance(scaling, dict):
        scaling = ScalingConfig(**scaling)
    trainer = copy.copy(trainable)
    trainer.scaling_config = scaling
    return trainer, space


def _has_domains(space):
    return any(isinstance(v, (Domain, SampleFrom)) or (isinstance(v, dict) and _has_domains(v))
               for v in space.values())


def _with_searcher_space(searcher, param_space):
    """The param_space with a searcher's own `space` (Ray's Searcher(space=...))
    under it; as Ray, the param_space then holds constants only."""
    space = searcher._space if isinstance(searcher, _NativeSearcher) else None
    if not space:
        return param_space
    if _has_domains(param_space):
        raise ValueError(f"param_space: {type(searcher).__name__} was given a space already; "
                         "the param_space may hold constant values only (or give the space "
                         "as param_space, not to the searcher)")
    return _merge(space, param_space)


def _metric_and_mode(tune_config):
    """TuneConfig's metric and mode, else the searcher's (Ray's Searcher(metric=,
    mode=)); ValueError when both set them differently."""
    metric, mode = tune_config.metric, tune_config.mode
    searcher = tune_config.search_alg
    if not isinstance(searcher, _NativeSearcher):
        return metric, mode  # a Python searcher adopts TuneConfig's (set_search_properties)
    own_metric, own_mode = searcher._metric, searcher._mode
    if own_metric is None and own_mode is None:
        return metric, mode
    name = type(searcher).__name__
    if (metric is not None and own_metric not in (None, metric)) or \
            (mode is not None and own_mode not in (None, mode)):
        raise ValueError(f"metric: TuneConfig(metric={metric!r}, mode={mode!r}) and {name}"
                         f"(metric={own_metric!r}, mode={own_mode!r}) differ; give them once")
    return metric or own_metric, mode or own_mode


class _DictStopper:
    """Ray's stop dict where a bound is a bool: a trial stops once any
    result[key] >= bound (True: once the flag is set)."""

    def __init__(self, bounds):
        self._bounds = bounds

    def __call__(self, trial_id, result):
        return any(key in result and result[key] >= bound for key, bound in self._bounds.items())


def _flag_stop(stop):
    """stop={"done": True} needs nothing (a report with done=True ends its trial
    anyway); other bool bounds make the dict a Python stopper."""
    rest = {k: v for k, v in stop.items() if not (k == "done" and v is True)}
    if not any(isinstance(v, bool) for v in rest.values()):
        return rest or None
    return _DictStopper(rest)


_TUNER_FILE = "tuner.pkl"


def _save_tuner(directory, given):
    """What Tuner.restore takes from the first fit() when not given again:
    the param_space and the TuneConfig, each kept only if it pickles
    (cloudpickle: a sample_from lambda, a trial_name_creator do)."""
    import cloudpickle  # here: as _reference.dumps imports it
    kept = {}
    for key, value in given.items():
        try:
            kept[key] = cloudpickle.dumps(value)
        except Exception:
            continue
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, _TUNER_FILE), "wb") as f:
        pickle.dump(kept, f)


def _load_tuner(path):
    try:
        with open(os.path.join(path, _TUNER_FILE), "rb") as f:
            kept = pickle.load(f)
    except FileNotFoundError:
        return {}
    return {key: pickle.loads(value) for key, value in kept.items()}


def _kept(saved, key, path):
    if key not in saved:
        raise ValueError(f"Tuner.restore: {path} kept no {key} (it did not pickle: a lock, "
                         "a file or an open connection in it, or the experiment is not a Python "
                         f"Tuner's); pass {key}= as first given")
    return saved[key]


class Tuner:
    def __init__(self, trainable, *, param_space=None, tune_config=None, run_config=None,
                 _resume=None):
        self._tune_config = tune_config or TuneConfig()
        self._run_config = run_config or RunConfig()
        self._resume = _resume or {}
        self._trainable = trainable
        self._given = {"param_space": param_space, "tune_config": tune_config}
        trainable, param_space = _with_trainer_scaling(resolve_trainable(trainable), param_space)
        made = _trainable_spec(trainable)
        ref, trainable_spec, base_space, display = made.ref, made.spec, made.space, made.display
        self._runs, self._payloads = made.runs, made.payloads
        self._display = display
        if param_space is not None and not isinstance(param_space, dict):
            raise ValueError(f"param_space must be a dict, got {type(param_space).__name__}")
        encoder = _values.Encoder()
        self._param_space = encoder.space(_merge(base_space, _with_searcher_space(
            self._tune_config.search_alg, param_space or {})), "param_space")
        self._objects = encoder.objects
        storage_path = _expand(self._run_config.storage_path)
        if not self._run_config.name:
            self._name = _default_name(display, storage_path)
        elif self._resume:
            self._name = self._run_config.name
        else:
            self._name = _free_name(self._run_config.name, storage_path)
        trainable_spec["name"] = ".".join(_names(made.runs))
        ref["name"] = trainable_spec["name"]
        if ref["kind"] == "class":
            ckpt, stop = self._run_config.checkpoint_config, self._run_config.stop
            ref["options"] = {
                "checkpoint_frequency": ckpt.checkpoint_frequency,
                "checkpoint_at_end": ckpt.checkpoint_at_end is not False,
                "max_iteration": stop.get("training_iteration") if isinstance(stop, dict)
                else None}
        if self._tune_config.chdir_to_trial_dir:
            ref["chdir"] = True
        bundle = {"CPU": trainable_spec["cpus_per_worker"]}
        if trainable_spec["gpus_per_worker"]:
            bundle["GPU"] = trainable_spec["gpus_per_worker"]
        workers = trainable_spec["num_workers"]  # an elastic group's [min, max]: its largest
        ref["bundles"] = [bundle] * (workers[-1] if isinstance(workers, list) else workers)
        self._ref = ref
        self._spec = self._make_spec(trainable_spec)
        _tunerun.check_spec(self._spec)

    def _make_spec(self, trainable_spec):
        tc, rc = self._tune_config, self._run_config
        stop = rc.stop
        if stop is not None and not isinstance(stop, dict) and not callable(stop):
            raise ValueError("RunConfig.stop: expected a dict {metric: bound}, a tune.Stopper "
                             f"or a function (trial_id, result) -> bool, got {stop!r}")
        if isinstance(stop, dict) and any(isinstance(v, bool) for v in stop.values()):
            stop = _flag_stop(stop)
        for callback in rc.callbacks or []:
            if not isinstance(callback, Callback):
                raise ValueError(f"RunConfig.callbacks: {callback!r} is not a tune.Callback")
        if rc.progress_reporter is not None and not isinstance(rc.progress_reporter,
                                                               (CLIReporter, ProgressReporter)):
            raise ValueError(f"RunConfig.progress_reporter: {rc.progress_reporter!r} is not a "
                             "tune.CLIReporter or tune.ProgressReporter")
        metric, mode = _metric_and_mode(tc)
        if metric is not None and mode is None:
            raise ValueError("mode: TuneConfig(metric=...) needs mode=\"min\" or \"max\"")
        # The spec table's fields (tune/spec/fields.h) from the keywords it names.
        spec = {}
        # RunConfig.cluster's fields, those left None from tunerun.init().
        rc = dataclasses.replace(rc, cluster=_nesting.default_launcher(
            _ray.cluster_settings(getattr(rc, "cluster", None))))
        configs = {"TuneConfig": tc, "RunConfig": rc}
        for field in _tunerun.spec_fields():
            if field["python"]:
                value = _keyword(configs, field["python"])
                if value is not None:
                    _put(spec, field["key"], value)
        for key, value in _ray.resources().items():  # tunerun.init(num_cpus=, num_gpus=)
            spec.setdefault("resources", {}).setdefault(key, value)
        # A fit() inside a trial holds what the trial holds.
        _nesting.bound_resources(spec, trainable_spec, explicit=bool(_ray.resources()))
        if metric is not None:
            spec.update(metric=metric, mode=mode)
        if isinstance(spec.get("storage_path"), str):
            spec["storage_path"] = _expand(spec["storage_path"])
        if tc.seed is None:
            spec["seed"] = self._fresh_or_stored_seed(spec.get("storage_path", "runs"))
        spec.update({
            "name": self._name,
            "time_budget_s": tc.time_budget_s,
            "trainable": trainable_spec,
            "param_space": self._param_space,
            "stop": stop,
        })
        if isinstance(tc.search_alg, _NativeSearcher):
            spec["search"] = tc.search_alg._spec(metric)
            _points_count_as_samples(spec, tc.search_alg, self._param_space)
        elif isinstance(tc.search_alg, Searcher):
            spec["custom_searcher"] = _adapters.SearcherAdapter(tc.search_alg, self._param_space,
                                                                tc.num_samples)
        elif tc.search_alg is not None:
            raise ValueError(f"TuneConfig.search_alg: {tc.search_alg!r} is not a "
                             "tune.search.Searcher")
        if tc.trial_dirname_creator is not None:
            spec["trial_dirname_creator"] = _TrialNamer(tc.trial_dirname_creator, self._display,
                                                        self._objects)
        if isinstance(tc.scheduler, _NativeScheduler):
            spec["scheduler"] = tc.scheduler._spec()
            if getattr(tc.scheduler, "_explore_fn", None) is not None:
                spec["scheduler_explore_fn"] = tc.scheduler._explore_fn
        elif isinstance(tc.scheduler, TrialScheduler):
            spec["custom_scheduler"] = _adapters.SchedulerAdapter(tc.scheduler)
        elif tc.scheduler is not None:
            raise ValueError(f"TuneConfig.scheduler: {tc.scheduler!r} is not a "
                             "tune.schedulers.TrialScheduler")
        return spec

    def _fresh_or_stored_seed(self, storage_path):
        """TuneConfig(seed=None): numpy's global generator when numpy is
        imported (np.random.seed() makes runs repeatable), else fresh entropy;
        kept in the experiment's spec so the run can be repeated
        (TuneConfig(seed=<the stored seed>)); a restore reuses the stored one."""
        if self._resume:
            db = os.path.join(storage_path, self._name, "experiment.db")
            if os.path.isfile(db):
                with sqlite3.connect(db) as connection:
                    (stored,) = connection.execute("SELECT spec FROM experiment").fetchone()
                seed = json.loads(stored or "{}").get("sweep", {}).get("seed")
                if seed is not None:
                    return seed
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            # Drawn from numpy's global generator: np.random.seed() before the
            # Tuner repeats the run, as Ray's FAQ says.
            return int(numpy.random.randint(0, 2**31))
        return int.from_bytes(os.urandom(4), "little")

    def fit(self) -> ResultGrid:
        """Runs the experiment (the C++ controller, without the GIL) and returns
        its results. Trial failures are in the ResultGrid (errors), not raised.
        Ctrl-C (SIGINT) or SIGTERM pauses the running trials at their next
        checkpoint (at most 30 s) and returns the results so far; Tuner.restore
        continues the experiment. ValueError, before anything runs, when the
        trainable does not pickle."""
        # Pickled now, not in Tuner(): the script's globals the trainable
        # uses are taken as they are when the experiment starts.
        runs = _reference.dumps(self._runs, f"the trainable {self._display}")
        directory = os.path.abspath(os.path.join(self._spec["storage_path"], self._name))
        os.makedirs(directory, exist_ok=True)
        # Beside the experiment, for the ranks (rewritten on a restore).
        self._ref["trainable"] = os.path.join(directory, _reference.TRAINABLE_FILE)
        _reference.write_atomically(self._ref["trainable"], runs)
        if self._objects:
            self._ref["objects"] = os.path.join(directory, _reference.OBJECTS_FILE)
            _reference.write_atomically(self._ref["objects"], _reference.dumps(
                self._objects, "the param_space's objects"))
        if self._payloads:
            self._ref["parameters"] = os.path.join(directory, _reference.PARAMETERS_FILE)
            _reference.write_atomically(self._ref["parameters"], b"".join(self._payloads))
        if not self._resume:
            _save_tuner(os.path.join(self._spec["storage_path"], self._name), self._given)
        argv = _reference.worker_argv(self._ref)
        # Fresh ranks fork from a zygote (tunerun/_zygote.py); TUNERUN_ZYGOTE=0
        # starts each with exec, as before.
        zygote = [] if os.environ.get("TUNERUN_ZYGOTE") == "0" else _reference.zygote_argv()
        reporter = self._run_config.progress_reporter
        if reporter is not None and self._tune_config.trial_name_creator is not None:
            reporter._name_trial = _TrialNamer(self._tune_config.trial_name_creator,
                                               self._display, self._objects)
        callbacks = [_with_ray_hooks(c, self._display) for c in self._run_config.callbacks or []]
        callbacks += [reporter] if reporter else []
        for callback in callbacks:
            callback.setup(stop=self._run_config.stop, num_samples=self._tune_config.num_samples,
                           total_num_samples=None, experiment_path=os.path.abspath(
                               os.path.join(self._spec["storage_path"], self._name)))
        path, interrupted = _tunerun.fit(self._spec, argv, callbacks,
                                         verbosity=self._run_config.verbose,
                                         resume=bool(self._resume),
                                         resume_errored=self._resume.get("resume_errored", False),
                                         restart_errored=self._resume.get("restart_errored",
                                                                          False),
                                         zygote_argv=zygote)
        if reporter is not None:
            reporter._finish()
        if interrupted and self._run_config.verbose:
            print(f"tunerun: the experiment stopped early; continue it with "
                  f"tune.Tuner.restore({path!r}, trainable)", file=sys.stderr)
        grid = self._grid(path)
        if callbacks:
            trials = _trials_of(grid)
            for callback in callbacks:
                callback.on_experiment_end(trials=trials)
        return grid

    def get_results(self) -> ResultGrid:
        return self._grid(os.path.join(self._spec["storage_path"], self._name))

    def _grid(self, path):
        grid = ResultGrid.from_experiment(path, objects=self._objects)
        if isinstance(self._runs, _per_trial_scaling.PerTrialTrainer):
            grid = _per_trial_scaling.with_scaling_objects(grid)
        return grid

    @classmethod
    def restore(cls, path, trainable, resume_unfinished=True, resume_errored=False,
                restart_errored=False, param_space=None, storage_filesystem=None, *,
                tune_config=None, run_config=None):
        """Continues the experiment in `path` (<storage_path>/<name>), Ray's
        arguments in Ray's order. param_space and tune_config left None are
        those of the first fit(), as Ray's (kept in <path>/tuner.pkl when they
        pickle with cloudpickle: one holding a lock or an open file must be
        given again). The ranks run `trainable`, pickled again.
        resume_unfinished=False and storage_filesystem are not supported."""
        if not resume_unfinished:
            raise ValueError("Tuner.restore: resume_unfinished=False is not supported (the "
                             "unfinished trials always continue)")
        if storage_filesystem is not None:
            raise ValueError("Tuner.restore: storage_filesystem is not supported (a local or "
                             "shared path only)")
        path = os.path.abspath(_expand(path)).rstrip("/")
        saved = _load_tuner(path) if param_space is None or tune_config is None else {}
        if param_space is None:
            param_space = _kept(saved, "param_space", path)
        if tune_config is None:
            tune_config = _kept(saved, "tune_config", path)
        run_config = run_config or RunConfig()
        run_config.name = os.path.basename(path)
        run_config.storage_path = os.path.dirname(path)
        return cls(trainable, param_space=param_space, tune_config=tune_config,
                   run_config=run_config,
                   _resume={"resume_errored": resume_errored, "restart_errored": restart_errored})

    @classmethod
    def can_restore(cls, path) -> bool:
        return os.path.isfile(os.path.join(_expand(path), "experiment.db"))
