"""Search algorithms, as Ray Tune's tune.search. Each is the C++ searcher of
the same kind (search/factory.h); options left as None take its default."""

from tunerun.tune.search_space import _to_data


class Searcher:
    _algorithm = "random"

    def __init__(self, **options):
        self._options = {k: _to_data(v) for k, v in options.items() if v is not None}

    def _spec(self):
        return {"algorithm": self._algorithm, **self._options}


class BasicVariantGenerator(Searcher):
    """Random and grid search (Ray's default searcher). `random_state` seeds it."""
    _algorithm = "random"

    def __init__(self, points_to_evaluate=None, random_state=None):
        super().__init__(points_to_evaluate=points_to_evaluate, seed=random_state)


class TPESearch(Searcher):
    """Tree-structured Parzen Estimator (search/tpe.h), in place of Ray's
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


class ConcurrencyLimiter(Searcher):
    """At most `max_concurrent` live trials of the wrapped searcher."""

    def __init__(self, searcher, max_concurrent):
        self._algorithm = searcher._algorithm
        super().__init__(**searcher._options, max_concurrent=max_concurrent)


class Repeater(Searcher):
    """Each config runs `repeat` times; the searcher sees their mean."""

    def __init__(self, searcher, repeat=1, set_index=True):
        self._algorithm = searcher._algorithm
        super().__init__(**searcher._options, repeat=repeat)
