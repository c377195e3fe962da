"""Ray's tune.schedulers.pb2: PB2."""

from tunerun.tune.schedulers import PB2

__all__ = ["PB2"]
