"""Ray's tune.search.bohb: TuneBOHB, here tunerun's BOHB (search/internal/bohb.h)."""

from tunerun.tune.search._searchers import _NativeSearcher


class TuneBOHB(_NativeSearcher):
    """Ray's TuneBOHB, mapped onto tunerun's BOHB (search/internal/bohb.h), not
    hpbandster: pair it with tune.schedulers.HyperBandForBOHB, as Ray's.
    `space` is a dict of tune domains (ConfigSpace is not supported); seed
    seeds it; max_concurrent > 0 caps the live trials. bohb_config takes
    search/factory.h's BOHB options (min_points_in_model, top_fraction,
    random_fraction, n_candidates)."""
    _algorithm = "bohb"

    def __init__(self, space=None, bohb_config=None, metric=None, mode=None,
                 points_to_evaluate=None, seed=None, max_concurrent=0):
        super().__init__(metric=metric, mode=mode, space=space,
                         points_to_evaluate=points_to_evaluate, seed=seed,
                         max_concurrent=max_concurrent or None, **(bohb_config or {}))
