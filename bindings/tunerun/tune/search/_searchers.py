"""tune.search's own searchers, on which those of Ray's submodules (bayesopt,
bohb, hyperopt, optuna) build; tunerun/tune/search/__init__.py says how
they run."""

from tunerun.tune._plugin import Plugin
from tunerun.tune.search_space import _to_data


class Searcher(Plugin):
    """Ray Tune's Searcher, for subclasses written in Python.

    The controller calls, from its event loop (a slow hook delays every trial):
        set_search_properties(metric, mode, config)  once, before suggest;
                             config is the Tuner's param_space as written;
                             with several objectives metric and mode are
                             lists (as Ray's) and each result holds them all
        suggest(trial_id)    -> a config dict, None (nothing now: asked again
                             after the next result or completion) or
                             Searcher.FINISHED
        on_trial_result(trial_id, result)
        on_trial_complete(trial_id, result=None, error=False)
        save(checkpoint_path) / restore(checkpoint_path)  experiment checkpoints
    The trial's config is the param_space with the suggestion merged over it
    (domains the suggestion leaves out are sampled, as Ray's .sample()), and
    at most TuneConfig.num_samples suggestions are used (-1: no limit).
    An exception in a hook ends fit() with it; the experiment stays restorable.

    Where we differ from Ray: save/restore by default pickle the searcher's
    attributes (those that pickle: tunerun/tune/_plugin.py; Ray's raise
    NotImplementedError), and on_trial_complete is a no-op by default.
    """

    FINISHED = "FINISHED"

    def set_search_properties(self, metric, mode, config, **spec) -> bool:
        return self._adopt(metric, mode)

    def suggest(self, trial_id):
        raise NotImplementedError(f"{type(self).__name__}.suggest")

    def on_trial_result(self, trial_id, result):
        pass

    def on_trial_complete(self, trial_id, result=None, error=False):
        pass


class _NativeSearcher(Searcher):
    """A C++ searcher chosen by name; the controller runs it without Python.
    metric, mode and space (Ray's constructor arguments) go to the Tuner:
    metric and mode where TuneConfig has none, space as the param_space."""
    _algorithm = "random"

    def __init__(self, metric=None, mode=None, space=None, **options):
        super().__init__()
        modes = mode if isinstance(mode, (list, tuple)) else [mode]
        if not modes or any(m not in (None, "min", "max") for m in modes) or \
                (isinstance(mode, (list, tuple)) and None in modes):
            raise ValueError(f"{type(self).__name__}: mode must be \"min\" or \"max\" (or a "
                             f"list of them, one per metric), got {mode!r}")
        if space is not None and not isinstance(space, dict):
            raise ValueError(f"{type(self).__name__}: space must be a dict of tune domains "
                             f"(tune.uniform...), not {type(space).__name__}: the library's own "
                             "space format is not supported")
        self._metric, self._mode, self._space = metric, mode, space
        self._options = {k: _to_data(v) for k, v in options.items() if v is not None}

    def _spec(self, metric=None):
        """The engine's search table; `metric`: the experiment's (a list when
        it has several objectives)."""
        return {"algorithm": self._algorithm, **self._options}

    def suggest(self, trial_id):
        raise TypeError(f"{type(self).__name__} runs in the C++ engine, not from Python")


class BasicVariantGenerator(_NativeSearcher):
    """Random and grid search (Ray's default searcher). `random_state` seeds it."""
    _algorithm = "random"

    def __init__(self, points_to_evaluate=None, max_concurrent=0, constant_grid_search=False,
                 random_state=None):
        if constant_grid_search:
            raise ValueError("BasicVariantGenerator: constant_grid_search is not supported "
                             "(each grid point draws its own random values)")
        super().__init__(points_to_evaluate=points_to_evaluate, seed=random_state,
                         max_concurrent=max_concurrent or None)


class TPESearch(_NativeSearcher):
    """Tree-structured Parzen Estimator (search/internal/tpe.h); `seed` and the TPE
    options of search/factory.h."""
    _algorithm = "tpe"

    def __init__(self, space=None, metric=None, mode=None, points_to_evaluate=None, seed=None,
                 n_startup_trials=None, **options):
        super().__init__(metric=metric, mode=mode, space=space,
                         points_to_evaluate=points_to_evaluate, seed=seed,
                         n_startup_trials=n_startup_trials, **options)


class MOTPESearch(TPESearch):
    """Multi-objective TPE (search/internal/motpe.h), for TuneConfig(metric=[...],
    mode=[...]); the TPE options of search/factory.h but weighting. Not in Ray
    (there: OptunaSearch with several metrics)."""
    _algorithm = "motpe"


class NSGA2Search(_NativeSearcher):
    """NSGA-II (search/internal/nsga2.h), for TuneConfig(metric=[...], mode=[...]):
    population_size, crossover_prob, mutation_prob, swapping_prob, crossover
    ("sbx" | "uniform"), eta_crossover, eta_mutation. Not in Ray (there:
    OptunaSearch(sampler=optuna.samplers.NSGAIISampler()))."""
    _algorithm = "nsga2"

    def __init__(self, space=None, metric=None, mode=None, points_to_evaluate=None, seed=None,
                 **options):
        super().__init__(metric=metric, mode=mode, space=space,
                         points_to_evaluate=points_to_evaluate, seed=seed, **options)


def _native(searcher, wrapper):
    if not isinstance(searcher, _NativeSearcher):
        raise ValueError(f"{wrapper}: wraps the C++ searchers only, not the Python "
                         f"{type(searcher).__name__} (use TuneConfig.max_concurrent_trials)")
    return searcher


class ConcurrencyLimiter(_NativeSearcher):
    """At most `max_concurrent` live trials of the wrapped searcher: a C++
    one in the engine; a Python one (a Searcher subclass, or OptunaSearch with a
    define-by-run space) in _PythonLimiter below."""

    def __new__(cls, searcher, max_concurrent, batch=False):
        if isinstance(searcher, Searcher) and not isinstance(searcher, _NativeSearcher):
            return _PythonLimiter(searcher, max_concurrent, batch)
        return super().__new__(cls)

    def __init__(self, searcher, max_concurrent, batch=False):
        if batch:
            raise ValueError("ConcurrencyLimiter: batch=True is not supported (trials start "
                             "as slots free up)")
        self._algorithm = _native(searcher, "ConcurrencyLimiter")._algorithm
        super().__init__(searcher._metric, searcher._mode, searcher._space,
                         **searcher._options, max_concurrent=max_concurrent)


class _PythonLimiter(Searcher):
    """ConcurrencyLimiter over a Python searcher, as Ray's: suggest() answers
    None (asked again later) while max_concurrent of its trials are live."""

    def __init__(self, searcher, max_concurrent, batch=False):
        if batch:
            raise ValueError("ConcurrencyLimiter: batch=True is not supported (trials start "
                             "as slots free up)")
        if not isinstance(max_concurrent, int) or max_concurrent < 1:
            raise ValueError(f"ConcurrencyLimiter: max_concurrent must be an int >= 1, got "
                             f"{max_concurrent!r}")
        super().__init__(searcher.metric, searcher.mode)
        self.searcher = searcher
        self.max_concurrent = max_concurrent
        self._live = set()

    def set_search_properties(self, metric, mode, config, **spec):
        adopted = self.searcher.set_search_properties(metric, mode, config, **spec)
        self._metric, self._mode = self.searcher.metric, self.searcher.mode
        return adopted

    def suggest(self, trial_id):
        if len(self._live) >= self.max_concurrent:
            return None
        suggestion = self.searcher.suggest(trial_id)
        if isinstance(suggestion, dict):
            self._live.add(trial_id)
        return suggestion

    def on_trial_result(self, trial_id, result):
        self.searcher.on_trial_result(trial_id, result)

    def on_trial_complete(self, trial_id, result=None, error=False):
        self._live.discard(trial_id)
        self.searcher.on_trial_complete(trial_id, result=result, error=error)


class Repeater(_NativeSearcher):
    """Each config runs `repeat` times; the (C++) searcher sees their mean."""

    def __init__(self, searcher, repeat=1, set_index=True):
        self._algorithm = _native(searcher, "Repeater")._algorithm
        super().__init__(searcher._metric, searcher._mode, searcher._space,
                         **searcher._options, repeat=repeat)

