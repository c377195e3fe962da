"""Search algorithms, as Ray Tune's tune.search.

Subclass `Searcher` to write one in Python (the C++ controller calls it with
the GIL held); the others are the C++ searchers of the same kind
(search/factory.h), with options left as None taking the C++ default.
"""

from tunerun.tune._plugin import Plugin
from tunerun.tune.search_space import _to_data


class Searcher(Plugin):
    """Ray Tune's Searcher, for subclasses written in Python.

    The controller calls, from its event loop (a slow hook delays every trial):
        set_search_properties(metric, mode, config)  once, before suggest;
                             config is the Tuner's param_space as written
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
    """A C++ searcher chosen by name; the controller runs it without Python."""
    _algorithm = "random"

    def __init__(self, **options):
        super().__init__()
        self._options = {k: _to_data(v) for k, v in options.items() if v is not None}

    def _spec(self):
        return {"algorithm": self._algorithm, **self._options}

    def suggest(self, trial_id):
        raise TypeError(f"{type(self).__name__} runs in the C++ engine, not from Python")


class BasicVariantGenerator(_NativeSearcher):
    """Random and grid search (Ray's default searcher). `random_state` seeds it."""
    _algorithm = "random"

    def __init__(self, points_to_evaluate=None, random_state=None):
        super().__init__(points_to_evaluate=points_to_evaluate, seed=random_state)


class TPESearch(_NativeSearcher):
    """Tree-structured Parzen Estimator (search/internal/tpe.h), in place of Ray's
    HyperOptSearch/OptunaSearch; `seed` and the TPE options of search/factory.h."""
    _algorithm = "tpe"

    def __init__(self, metric=None, mode=None, points_to_evaluate=None, seed=None,
                 n_startup_trials=None, **options):
        if metric is not None or mode is not None:
            raise ValueError("TPESearch: give metric and mode in TuneConfig")
        super().__init__(points_to_evaluate=points_to_evaluate, seed=seed,
                         n_startup_trials=n_startup_trials, **options)


HyperOptSearch = TPESearch
OptunaSearch = TPESearch


def _native(searcher, wrapper):
    if not isinstance(searcher, _NativeSearcher):
        raise ValueError(f"{wrapper}: wraps the C++ searchers only, not the Python "
                         f"{type(searcher).__name__} (use TuneConfig.max_concurrent_trials)")
    return searcher


class ConcurrencyLimiter(_NativeSearcher):
    """At most `max_concurrent` live trials of the wrapped (C++) searcher."""

    def __init__(self, searcher, max_concurrent):
        self._algorithm = _native(searcher, "ConcurrencyLimiter")._algorithm
        super().__init__(**searcher._options, max_concurrent=max_concurrent)


class Repeater(_NativeSearcher):
    """Each config runs `repeat` times; the (C++) searcher sees their mean."""

    def __init__(self, searcher, repeat=1, set_index=True):
        self._algorithm = _native(searcher, "Repeater")._algorithm
        super().__init__(**searcher._options, repeat=repeat)
