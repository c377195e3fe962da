"""Ray Tune's tune module over tunerun: Tuner, TuneConfig, the search-space
domains, tune.schedulers, tune.search, ResultGrid."""

from tunerun.tune import experiment, schedulers, search
from tunerun.tune.callback import Callback, Stopper
from tunerun.tune.result_grid import Result, ResultGrid, TrialError
from tunerun.tune.search_space import (Domain, choice, grid_search, lograndint, loguniform,
                                       qlograndint, qloguniform, qrandint, qrandn, quniform,
                                       randint, randn, sample_from, uniform)
from tunerun.tune.trainable import Trainable, with_parameters
from tunerun.tune.tuner import TuneConfig, Tuner, with_resources
from tunerun.train.session import report, get_checkpoint, get_context
from tunerun.train.checkpoint import Checkpoint

__all__ = [
    "Callback", "Checkpoint", "Domain", "Stopper", "Result", "ResultGrid", "Trainable",
    "TrialError", "TuneConfig", "Tuner", "choice", "experiment", "get_checkpoint",
    "get_context", "grid_search", "lograndint", "loguniform", "qlograndint", "qloguniform",
    "qrandint", "qrandn", "quniform", "randint", "randn", "report", "sample_from", "schedulers",
    "search", "uniform", "with_parameters", "with_resources",
]
