"""Ray's tune.search.basic_variant: BasicVariantGenerator (random and grid search)."""

from tunerun.tune.search import BasicVariantGenerator

__all__ = ["BasicVariantGenerator"]
