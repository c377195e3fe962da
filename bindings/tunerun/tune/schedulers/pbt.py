"""Ray's tune.schedulers.pbt: PopulationBasedTraining."""

from tunerun.tune.schedulers import PopulationBasedTraining

__all__ = ["PopulationBasedTraining"]
