"""Ray's tune.schedulers.hyperband: HyperBandScheduler."""

from tunerun.tune.schedulers import HyperBandScheduler

__all__ = ["HyperBandScheduler"]
