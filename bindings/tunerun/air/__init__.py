"""Ray AIR's names (Ray 2.0-2.6), for scripts written before Ray 2.7 moved
them to ray.train: air.RunConfig, CheckpointConfig, FailureConfig,
ScalingConfig and Result, ray.air.session and ray.air.checkpoint.Checkpoint.
The same objects as tunerun.train's; `from tunerun import air` is all a
script of that age changes."""

from tunerun import _lazy

_lazy.install(globals(), {
    **{name: f"tunerun.train.config:{name}" for name in (
        "CheckpointConfig", "FailureConfig", "RunConfig", "ScalingConfig")},
    "Checkpoint": "tunerun.train.checkpoint:Checkpoint",
    "Result": "tunerun.tune.result_grid:Result",
    "session": "tunerun.air.session",
    "checkpoint": "tunerun.air.checkpoint",
    "config": "tunerun.air.config",
})
