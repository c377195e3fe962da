"""Ray Train's train.base_trainer: TrainingFailedError, what a trainer's
fit() raises when its training failed."""


class TrainingFailedError(RuntimeError):
    """The training failed: its text holds the failing rank's error and
    traceback; __cause__ is Result.error (tune.TrialError, also an instance
    of the rank's exception type)."""

    _FAILURE_CONFIG_MSG = (
        "To start a new run that will retry on training failures, set "
        "`train.RunConfig(failure_config=train.FailureConfig(max_failures))` in the Trainer's "
        "`run_config` with `max_failures > 0`, or `max_failures = -1` for unlimited retries.")


def raise_if_failed(result, path):
    """`result` (a one-trial experiment's) when it did not fail; else raises
    TrainingFailedError from its error, as Ray's BaseTrainer.fit()."""
    if result.error is None:
        return result
    raise TrainingFailedError(
        f"The training failed: {result.error}\n\nThe experiment is in {path}. "
        f"{TrainingFailedError._FAILURE_CONFIG_MSG}") from result.error
