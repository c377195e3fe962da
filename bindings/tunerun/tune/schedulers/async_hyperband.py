"""Ray's tune.schedulers.async_hyperband: AsyncHyperBandScheduler (ASHAScheduler)."""

from tunerun.tune.schedulers import ASHAScheduler, AsyncHyperBandScheduler

__all__ = ["ASHAScheduler", "AsyncHyperBandScheduler"]
