"""tune.PlacementGroupFactory, as Ray's: what a trial reserves, and what
train.get_context().get_trial_resources() answers in a rank."""


class PlacementGroupFactory:
    """Ray's PlacementGroupFactory(bundles, strategy="PACK"): a trial's
    resources as bundles ([{"CPU": 1, "GPU": 1}, {"CPU": 2}]). Where we differ
    from Ray: a trial here is one process, which gets the sum of the bundles
    (required_resources); the strategy is accepted and has no effect."""

    def __init__(self, bundles, strategy="PACK", *args, **kwargs):
        if not bundles or not all(isinstance(b, dict) for b in bundles):
            raise ValueError("PlacementGroupFactory: bundles must be a non-empty list of dicts")
        self.bundles = [dict(b) for b in bundles]
        self.strategy = strategy

    @property
    def head_bundle_is_empty(self):
        return not self.bundles[0]

    @property
    def required_resources(self):
        total = {}
        for bundle in self.bundles:
            for key, value in bundle.items():
                total[key] = total.get(key, 0) + value
        return total
