"""Ray's tune.tune_config module: TuneConfig (defined in tunerun/tune/tuner.py)."""

from tunerun.tune.tuner import TuneConfig

__all__ = ["TuneConfig"]
