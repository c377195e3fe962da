"""Ray's ray.tune.analysis: ExperimentAnalysis (tunerun.tune.legacy)."""

from tunerun.tune.legacy import ExperimentAnalysis  # noqa: F401
