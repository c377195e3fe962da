"""Ray's tune.search.bayesopt: BayesOptSearch, here tunerun's GP-BO (search/internal/gp.h)."""

from tunerun.tune.search import _NativeSearcher


class BayesOptSearch(_NativeSearcher):
    """Ray's BayesOptSearch, mapped onto tunerun's Gaussian-process Bayesian
    optimisation (search/internal/gp.h), not the bayes_opt library: `space` is a dict
    of tune domains, random_search_steps are the random configs before the
    model (n_startup_trials), random_state seeds it. utility_kwargs, patience,
    skip_duplicate and analysis are not supported (the acquisition is GP-BO's)."""
    _algorithm = "gp"

    def __init__(self, space=None, metric=None, mode=None, points_to_evaluate=None,
                 utility_kwargs=None, random_state=42, random_search_steps=10, verbose=0,
                 patience=5, skip_duplicate=True, analysis=None):
        if utility_kwargs is not None or analysis is not None:
            raise ValueError("BayesOptSearch: utility_kwargs and analysis are not supported "
                             "(this is tunerun's GP-BO)")
        super().__init__(metric=metric, mode=mode, space=space,
                         points_to_evaluate=points_to_evaluate, seed=random_state,
                         n_startup_trials=random_search_steps)
