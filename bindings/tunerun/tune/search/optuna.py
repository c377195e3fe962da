"""Ray's tune.search.optuna: OptunaSearch, here tunerun's own TPE (search/internal/tpe.h)."""

from tunerun.tune.search import TPESearch


class OptunaSearch(TPESearch):
    """Ray's OptunaSearch, mapped onto tunerun's TPE (search/internal/tpe.h, weighted
    as Optuna's TPESampler), not Optuna itself: `space` is a dict of tune
    domains (Optuna distributions and define-by-run functions are not
    supported), `sampler` must be None (TPE), `seed` seeds it, and
    `evaluated_rewards` is not supported (give points_to_evaluate only)."""

    def __init__(self, space=None, metric=None, mode=None, points_to_evaluate=None, sampler=None,
                 seed=None, evaluated_rewards=None):
        if sampler is not None:
            raise ValueError("OptunaSearch: sampler is not supported (this is tunerun's TPE)")
        if evaluated_rewards is not None:
            raise ValueError("OptunaSearch: evaluated_rewards is not supported")
        super().__init__(space=space, metric=metric, mode=mode,
                         points_to_evaluate=points_to_evaluate, seed=seed, weighting="optuna")
