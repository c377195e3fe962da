"""Ray's tune.schedulers.hb_bohb: HyperBandForBOHB."""

from tunerun.tune.schedulers import HyperBandForBOHB

__all__ = ["HyperBandForBOHB"]
