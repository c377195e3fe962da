"""Ray Tune's tune module over tunerun: Tuner, TuneConfig, the search-space
domains, tune.schedulers, tune.search, ResultGrid."""

from tunerun.tune import schedulers, search
from tunerun.tune.callback import Callback, Stopper
from tunerun.tune.result_grid import Result, ResultGrid, TrialError
from tunerun.tune.search_space import (Domain, choice, grid_search, lograndint, loguniform,
                                       qlograndint, qloguniform, qrandint, qrandn, quniform,
                                       randint, randn, uniform)
from tunerun.tune.tuner import TuneConfig, Tuner, with_resources
from tunerun.train.session import report, get_checkpoint, get_context
from tunerun.train.checkpoint import Checkpoint

__all__ = [
    "Callback", "Checkpoint", "Domain", "Stopper", "Result", "ResultGrid", "TrialError", "TuneConfig", "Tuner",
    "choice", "get_checkpoint", "get_context", "grid_search", "lograndint", "loguniform",
    "qlograndint", "qloguniform", "qrandint", "qrandn", "quniform", "randint", "randn",
    "report", "schedulers", "search", "uniform", "with_resources",
]
