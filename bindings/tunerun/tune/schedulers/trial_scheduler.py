"""Ray's tune.schedulers.trial_scheduler: TrialScheduler and FIFOScheduler."""

from tunerun.tune.schedulers import FIFOScheduler, TrialScheduler

__all__ = ["FIFOScheduler", "TrialScheduler"]
