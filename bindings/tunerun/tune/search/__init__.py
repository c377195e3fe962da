"""Search algorithms, as Ray Tune's tune.search, with Ray's submodules
(tune.search.bohb.TuneBOHB, tune.search.optuna.OptunaSearch, ...).

Subclass `Searcher` to write one in Python (the C++ controller calls it with
the GIL held); the others are the C++ searchers of the same kind
(search/factory.h), with options left as None taking the C++ default.
Those named after a library (OptunaSearch, HyperOptSearch, BayesOptSearch,
TuneBOHB) take Ray's constructor arguments and run our own TPE, GP-BO or
BOHB, not the library: their `space` is tune's domains (tune.uniform...),
not the library's own space format.
"""

from tunerun.tune.search._searchers import (BasicVariantGenerator, ConcurrencyLimiter,  # noqa: F401
                                            MOTPESearch, NSGA2Search, Repeater, Searcher,
                                            TPESearch, _NativeSearcher, _PythonLimiter)
# Ray's submodules' classes, importable from here as from Ray's tune.search.
from tunerun.tune.search.bayesopt import BayesOptSearch  # noqa: F401
from tunerun.tune.search.bohb import TuneBOHB  # noqa: F401
from tunerun.tune.search.hyperopt import HyperOptSearch  # noqa: F401
from tunerun.tune.search.optuna import OptunaSearch  # noqa: F401

# Ray's tune.create_searcher names, those with a searcher here.
_SEARCHERS = {"variant_generator": BasicVariantGenerator, "random": BasicVariantGenerator,
              "bayesopt": BayesOptSearch, "bohb": TuneBOHB, "hyperopt": HyperOptSearch,
              "optuna": OptunaSearch, "tpe": TPESearch}


def create_searcher(search_alg, **kwargs):
    """Ray's tune.create_searcher: the searcher named `search_alg` made with kwargs."""
    cls = _SEARCHERS.get(str(search_alg).lower())
    if cls is None:
        raise ValueError(f"create_searcher: unknown search algorithm {search_alg!r} (known: "
                         f"{', '.join(sorted(_SEARCHERS))}; Ray's ax, nevergrad, zoopt, hebo, "
                         "blendsearch and cfo are not in tunerun)")
    return cls(**kwargs)
