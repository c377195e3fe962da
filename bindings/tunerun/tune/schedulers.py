"""Trial schedulers, as Ray Tune's tune.schedulers. Each is the C++ scheduler
of the same name (schedulers/); options left as None take the C++ (= Ray's)
default. Options are checked when the Tuner is built (ValueError naming it)."""

from tunerun.tune.search_space import _to_data


class TrialScheduler:
    _type = "fifo"

    def __init__(self, **options):
        self._options = {k: _to_data(v) for k, v in options.items() if v is not None}

    def _spec(self):
        return {"type": self._type, **self._options}


class FIFOScheduler(TrialScheduler):
    _type = "fifo"

    def __init__(self):
        super().__init__()


class AsyncHyperBandScheduler(TrialScheduler):
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


class HyperBandScheduler(TrialScheduler):
    _type = "hyperband"

    def __init__(self, time_attr="training_iteration", metric=None, mode=None, max_t=81,
                 reduction_factor=3, stop_last_trials=True):
        super().__init__(time_attr=time_attr, metric=metric, mode=mode, max_t=max_t,
                         reduction_factor=reduction_factor, stop_last_trials=stop_last_trials)


class MedianStoppingRule(TrialScheduler):
    _type = "median_stopping_rule"

    def __init__(self, time_attr="time_total_s", metric=None, mode=None, grace_period=60.0,
                 min_samples_required=3, min_time_slice=0, hard_stop=True):
        super().__init__(time_attr=time_attr, metric=metric, mode=mode,
                         grace_period=grace_period, min_samples_required=min_samples_required,
                         min_time_slice=min_time_slice, hard_stop=hard_stop)


class PopulationBasedTraining(TrialScheduler):
    """Ray's PBT. hyperparam_mutations: domains or lists of values per key;
    custom_explore_fn is not supported from Python."""
    _type = "pbt"

    def __init__(self, time_attr="time_total_s", metric=None, mode=None,
                 perturbation_interval=60.0, burn_in_period=0.0, hyperparam_mutations=None,
                 quantile_fraction=0.25, resample_probability=0.25,
                 perturbation_factors=(1.2, 0.8), custom_explore_fn=None, synch=False,
                 seed=None):
        if custom_explore_fn is not None:
            raise ValueError("PopulationBasedTraining: custom_explore_fn is not supported "
                             "from Python")
        super().__init__(time_attr=time_attr, metric=metric, mode=mode,
                         perturbation_interval=perturbation_interval,
                         burn_in_period=burn_in_period,
                         hyperparam_mutations=hyperparam_mutations,
                         quantile_fraction=quantile_fraction,
                         resample_probability=resample_probability,
                         perturbation_factors=list(perturbation_factors), synch=synch, seed=seed)
