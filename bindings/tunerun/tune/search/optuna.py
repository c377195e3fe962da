"""Ray's tune.search.optuna: OptunaSearch, here tunerun's own TPE (search/internal/tpe.h)
or, with several metrics, its multi-objective TPE or NSGA-II."""

from tunerun.tune.search import TPESearch


class OptunaSearch(TPESearch):
    """Ray's OptunaSearch, mapped onto tunerun's TPE (search/internal/tpe.h, weighted
    as Optuna's TPESampler), not Optuna itself: `space` is a dict of tune
    domains (Optuna distributions and define-by-run functions are not
    supported), `seed` seeds it, and `evaluated_rewards` is not supported
    (give points_to_evaluate only). `sampler`: None (TPE; with a list of
    metrics, multi-objective TPE, search/internal/motpe.h, as Optuna's
    TPESampler then is), or an optuna.samplers.TPESampler or NSGAIISampler
    object, which picks tunerun's TPE (MOTPE) or NSGA-II by its class name
    and leaves its own settings aside."""

    def __init__(self, space=None, metric=None, mode=None, points_to_evaluate=None, sampler=None,
                 seed=None, evaluated_rewards=None):
        kind = type(sampler).__name__ if sampler is not None else "TPESampler"
        if kind not in ("TPESampler", "NSGAIISampler"):
            raise ValueError(f"OptunaSearch: sampler {kind} is not supported (tunerun runs its "
                             "own TPE or NSGA-II: pass None, TPESampler() or NSGAIISampler())")
        if evaluated_rewards is not None:
            raise ValueError("OptunaSearch: evaluated_rewards is not supported")
        several = isinstance(metric, (list, tuple)) and len(metric) > 1
        if kind == "NSGAIISampler":
            self._algorithm = "nsga2"
        elif several:
            self._algorithm = "motpe"
        options = {} if self._algorithm != "tpe" else {"weighting": "optuna"}
        super().__init__(space=space, metric=metric, mode=mode,
                         points_to_evaluate=points_to_evaluate, seed=seed, **options)
