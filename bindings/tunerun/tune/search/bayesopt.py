"""Ray's tune.search.bayesopt: BayesOptSearch, here tunerun's GP-BO (search/internal/gp.h)."""

import warnings

from tunerun.tune.search._searchers import _NativeSearcher


class BayesOptSearch(_NativeSearcher):
    """Ray's BayesOptSearch, mapped onto tunerun's Gaussian-process Bayesian
    optimisation (search/internal/gp.h), not the bayes_opt library: `space` is a dict
    of tune domains, random_search_steps are the random configs before the
    model (n_startup_trials), random_state seeds it. The acquisition is
    always expected improvement: utility_kwargs (the bayes_opt utility, Ray's
    default UCB) is accepted and ignored, with a warning when it asks for
    another. patience and skip_duplicate have no effect (GP-BO never
    proposes a config again); analysis is refused (use TuneConfig(warm_start=))."""
    _algorithm = "gp"

    def __init__(self, space=None, metric=None, mode=None, points_to_evaluate=None,
                 utility_kwargs=None, random_state=42, random_search_steps=10, verbose=0,
                 patience=5, skip_duplicate=True, analysis=None):
        if analysis is not None:
            raise ValueError("BayesOptSearch: analysis is not supported; give the earlier "
                             "experiments' directories as TuneConfig(warm_start=[...])")
        if utility_kwargs is not None and (utility_kwargs.get("kind", "ucb") != "ei"
                                           or utility_kwargs.get("xi", 0.0) != 0.0):
            warnings.warn(f"BayesOptSearch: utility_kwargs={utility_kwargs!r} is ignored: "
                          "tunerun's GP-BO always uses expected improvement (kind=\"ei\", "
                          "xi=0)", stacklevel=2)
        super().__init__(metric=metric, mode=mode, space=space,
                         points_to_evaluate=points_to_evaluate, seed=random_state,
                         n_startup_trials=random_search_steps)
