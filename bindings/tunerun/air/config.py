"""ray.air.config: the run and scaling configs (tunerun.train's)."""

from tunerun.train.config import (CheckpointConfig, FailureConfig, RunConfig,  # noqa: F401
                                  ScalingConfig)
