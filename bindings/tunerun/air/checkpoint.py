"""ray.air.checkpoint: the Checkpoint class (tunerun.train's)."""

from tunerun.train.checkpoint import Checkpoint  # noqa: F401
