"""Ray's tune.search.hyperopt: HyperOptSearch, here tunerun's own TPE (search/internal/tpe.h)."""

from tunerun.tune.search._searchers import TPESearch


class HyperOptSearch(TPESearch):
    """Ray's HyperOptSearch, mapped onto tunerun's TPE (search/internal/tpe.h), not
    HyperOpt itself: `space` is a dict of tune domains (hp.* spaces are not
    supported); n_initial_points are the random configs before the model
    (TPE's n_startup_trials), random_state_seed seeds it, gamma is TPE's."""

    def __init__(self, space=None, metric=None, mode=None, points_to_evaluate=None,
                 n_initial_points=20, random_state_seed=None, gamma=0.25):
        super().__init__(space=space, metric=metric, mode=mode,
                         points_to_evaluate=points_to_evaluate, seed=random_state_seed,
                         n_startup_trials=n_initial_points, gamma=gamma)
