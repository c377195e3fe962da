"""Ray's tune.schedulers.median_stopping_rule: MedianStoppingRule."""

from tunerun.tune.schedulers import MedianStoppingRule

__all__ = ["MedianStoppingRule"]
