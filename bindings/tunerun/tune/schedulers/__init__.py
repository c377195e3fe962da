"""Trial schedulers, as Ray Tune's tune.schedulers, with Ray's submodules
(tune.schedulers.pb2.PB2, tune.schedulers.hb_bohb.HyperBandForBOHB, ...).

Subclass `TrialScheduler` to write one in Python (the C++ controller calls it
with the GIL held); the others are the C++ schedulers of the same name
(schedulers/), with options left as None taking the C++ (= Ray's) default,
checked when the Tuner is built (ValueError naming the option).
"""

from tunerun.tune._plugin import Plugin
from tunerun.tune.schedulers._python_explore import PythonExplore, split_mutations
from tunerun.tune.search_space import _to_data


class TrialScheduler(Plugin):
    """Ray Tune's TrialScheduler, for subclasses written in Python.

    Hooks get `tune_controller` (an object whose get_trials() lists the
    trials: in choose_trial_to_run, those that may run now, PENDING or
    PAUSED; elsewhere, every trial seen) and `trial`, a
    tunerun.tune.experiment.Trial (trial_id, status, config, last_result),
    the same object for the same trial across calls:
        on_trial_add(tune_controller, trial)
        on_trial_result(tune_controller, trial, result) -> CONTINUE | PAUSE | STOP
        on_trial_complete(tune_controller, trial, result)
        on_trial_error(tune_controller, trial)
        on_trial_remove(tune_controller, trial)   stopped (STOP, a stopper)
        choose_trial_to_run(tune_controller) -> a Trial of get_trials(), or None
        take_exploit(tune_controller, trial) -> (donor, new_config) or None
        take_trials_to_stop(tune_controller) -> Trials (or trial_ids)
        save(checkpoint_path) / restore(checkpoint_path)
    A PAUSEd trial runs again when choose_trial_to_run picks it. The default
    choose_trial_to_run takes the first PENDING trial, else the first PAUSED.
    An exception in a hook ends fit() with it; the experiment stays restorable.

    take_exploit and take_trials_to_stop are tunerun's (Ray's PBT and
    HyperBand do the same through private controller calls); they let a
    Python scheduler exploit as PBT does and end trials that are not running:
    - take_exploit: called for a trial right after on_trial_result returned
      PAUSE for it, and again right before a PAUSED trial that
      choose_trial_to_run picked runs again. Return None, or (donor,
      new_config): donor a Trial (or trial_id) with a checkpoint; the trial
      then resumes from a clone of the donor's latest checkpoint with
      new_config as its whole config (recorded in the exploits table). Hand
      each exploit out once.
    - take_trials_to_stop: called once per controller turn (only if the
      subclass overrides it); the PAUSED or PENDING trials listed end as
      TERMINATED without running again ("stopped by scheduler"), then
      on_trial_remove is called; others listed are skipped.

    Where we differ from Ray: save/restore by default pickle the scheduler's
    attributes (those that pickle: tunerun/tune/_plugin.py); NOOP means CONTINUE.
    """

    CONTINUE = "CONTINUE"
    PAUSE = "PAUSE"
    STOP = "STOP"
    NOOP = "NOOP"

    def set_search_properties(self, metric, mode, **spec) -> bool:
        return self._adopt(metric, mode)

    def on_trial_add(self, tune_controller, trial):
        pass

    def on_trial_error(self, tune_controller, trial):
        pass

    def on_trial_result(self, tune_controller, trial, result):
        return TrialScheduler.CONTINUE

    def on_trial_complete(self, tune_controller, trial, result):
        pass

    def on_trial_remove(self, tune_controller, trial):
        pass

    def take_exploit(self, tune_controller, trial):
        return None

    def take_trials_to_stop(self, tune_controller):
        return []

    def choose_trial_to_run(self, tune_controller):
        trials = tune_controller.get_trials()
        for status in ("PENDING", "PAUSED"):
            for trial in trials:
                if trial.status == status:
                    return trial
        return None

    def debug_string(self) -> str:
        return f"Using {type(self).__name__} (Python)"


class _NativeScheduler(TrialScheduler):
    """A C++ scheduler chosen by name; the controller runs it without Python."""
    _type = "fifo"

    def __init__(self, **options):
        super().__init__()
        self._options = {k: _to_data(v) for k, v in options.items() if v is not None}

    def _spec(self):
        return {"type": self._type, **self._options}


class FIFOScheduler(_NativeScheduler):
    _type = "fifo"

    def __init__(self):
        super().__init__()


class AsyncHyperBandScheduler(_NativeScheduler):
    """Ray's ASHA. `promotion` (not in Ray) pauses trials at rungs instead of stopping."""
    _type = "asha"

    def __init__(self, time_attr="training_iteration", metric=None, mode=None, max_t=100,
                 grace_period=1, reduction_factor=4, brackets=1, stop_last_trials=True,
                 promotion=None, seed=None):
        super().__init__(time_attr=time_attr, metric=metric, mode=mode, max_t=max_t,
                         grace_period=grace_period, reduction_factor=reduction_factor,
                         brackets=brackets, stop_last_trials=stop_last_trials,
                         promotion=promotion, seed=seed)


ASHAScheduler = AsyncHyperBandScheduler


class MOASHAScheduler(_NativeScheduler):
    """Multi-objective ASHA (schedulers/internal/mo_asha.h), for
    TuneConfig(metric=[...], mode=[...]): trials at a rung ranked by
    non-dominated sorting. Not in Ray (Syne Tune's MOASHA)."""
    _type = "mo_asha"

    def __init__(self, time_attr="training_iteration", max_t=100, grace_period=1,
                 reduction_factor=4):
        super().__init__(time_attr=time_attr, max_t=max_t, grace_period=grace_period,
                         reduction_factor=reduction_factor)


class HyperBandScheduler(_NativeScheduler):
    _type = "hyperband"

    def __init__(self, time_attr="training_iteration", metric=None, mode=None, max_t=81,
                 reduction_factor=3, stop_last_trials=True):
        super().__init__(time_attr=time_attr, metric=metric, mode=mode, max_t=max_t,
                         reduction_factor=reduction_factor, stop_last_trials=stop_last_trials)


class MedianStoppingRule(_NativeScheduler):
    _type = "median_stopping_rule"

    def __init__(self, time_attr="time_total_s", metric=None, mode=None, grace_period=60.0,
                 min_samples_required=3, min_time_slice=0, hard_stop=True):
        super().__init__(time_attr=time_attr, metric=metric, mode=mode,
                         grace_period=grace_period, min_samples_required=min_samples_required,
                         min_time_slice=min_time_slice, hard_stop=hard_stop)


class PopulationBasedTraining(_NativeScheduler):
    """Ray's PBT (schedulers/internal/pbt.h). hyperparam_mutations: per key a
    domain, a list of values, a nested dict, or (as Ray's pbt_example) a
    function of no arguments or a sample_from; custom_explore_fn(config) ->
    config runs after them. Functions and custom_explore_fn run on the
    driver with the GIL held (tunerun/tune/schedulers/_python_explore.py);
    the rest of PBT is C++. seed seeds PBT's own draws (tunerun's; Ray uses
    the global `random`)."""
    _type = "pbt"

    def __init__(self, time_attr="time_total_s", metric=None, mode=None,
                 perturbation_interval=60.0, burn_in_period=0.0, hyperparam_mutations=None,
                 quantile_fraction=0.25, resample_probability=0.25,
                 perturbation_factors=(1.2, 0.8), custom_explore_fn=None, synch=False,
                 seed=None):
        if custom_explore_fn is not None and not callable(custom_explore_fn):
            raise ValueError("PopulationBasedTraining: custom_explore_fn must be a function "
                             f"config -> config, got {custom_explore_fn!r}")
        data, functions = split_mutations(hyperparam_mutations)
        super().__init__(time_attr=time_attr, metric=metric, mode=mode,
                         perturbation_interval=perturbation_interval,
                         burn_in_period=burn_in_period,
                         hyperparam_mutations=data if hyperparam_mutations is not None else None,
                         quantile_fraction=quantile_fraction,
                         resample_probability=resample_probability,
                         perturbation_factors=list(perturbation_factors), synch=synch, seed=seed)
        self._explore_fn = None
        if functions or custom_explore_fn is not None:
            self._explore_fn = PythonExplore(functions, resample_probability,
                                             perturbation_factors, custom_explore_fn, seed)


class HyperBandForBOHB(HyperBandScheduler):
    """Ray's HyperBandForBOHB (schedulers/internal/hyperband.h with for_bohb): HyperBand
    whose brackets fill as BOHB suggests; pair it with
    tune.search.bohb.TuneBOHB, as Ray's."""

    def __init__(self, time_attr="training_iteration", metric=None, mode=None, max_t=81,
                 reduction_factor=3, stop_last_trials=True):
        super().__init__(time_attr=time_attr, metric=metric, mode=mode, max_t=max_t,
                         reduction_factor=reduction_factor, stop_last_trials=stop_last_trials)
        self._options["for_bohb"] = True


class PB2(_NativeScheduler):
    """Ray's PB2 (schedulers/internal/pb2.h): PBT whose explore step picks the new
    hyperparameters with a GP bandit within hyperparam_bounds
    ({key: [low, high]}). log_config and require_attrs are accepted (the
    configs are in the experiment's store either way); custom_explore_fn is
    not supported. burn_in_period and seed are tunerun's."""
    _type = "pb2"

    def __init__(self, time_attr="time_total_s", metric=None, mode=None,
                 perturbation_interval=60.0, hyperparam_bounds=None, quantile_fraction=0.25,
                 log_config=True, require_attrs=True, synch=False, custom_explore_fn=None,
                 burn_in_period=None, seed=None):
        if custom_explore_fn is not None:
            raise ValueError("PB2: custom_explore_fn is not supported")
        if hyperparam_bounds is not None:
            hyperparam_bounds = {k: list(v) for k, v in hyperparam_bounds.items()}
        super().__init__(time_attr=time_attr, metric=metric, mode=mode,
                         perturbation_interval=perturbation_interval,
                         hyperparam_bounds=hyperparam_bounds,
                         quantile_fraction=quantile_fraction, synch=synch,
                         burn_in_period=burn_in_period, seed=seed)


# Ray's tune.create_scheduler names, those with a scheduler here.
_SCHEDULERS = {"fifo": FIFOScheduler, "async_hyperband": AsyncHyperBandScheduler,
               "asynchyperband": AsyncHyperBandScheduler, "asha": AsyncHyperBandScheduler,
               "median_stopping_rule": MedianStoppingRule, "medianstopping": MedianStoppingRule,
               "hyperband": HyperBandScheduler, "hb_bohb": HyperBandForBOHB,
               "pbt": PopulationBasedTraining, "pb2": PB2}


def create_scheduler(scheduler, **kwargs):
    """Ray's tune.create_scheduler: the scheduler named `scheduler` made with kwargs."""
    cls = _SCHEDULERS.get(str(scheduler).lower())
    if cls is None:
        raise ValueError(f"create_scheduler: unknown scheduler {scheduler!r} (known: "
                         f"{', '.join(sorted(_SCHEDULERS))}; Ray's pbt_replay and "
                         "resource_changing are not in tunerun)")
    return cls(**kwargs)
