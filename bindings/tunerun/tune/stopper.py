"""Ray Tune's tune.stopper: stoppers for RunConfig(stop=...).

MaximumIterationStopper, TrialPlateauStopper, ExperimentPlateauStopper,
TimeoutStopper and CombinedStopper are the C++ stoppers of tune/builtin_stoppers.h
(bindings/stoppers_py.cpp builds them from _native()): the controller asks
them about every result without Python, so they cannot be called from
Python. A Stopper subclass of your own, FunctionStopper and NoopStopper run
in Python on the controller's loop (tunerun/tune/callback.py), and may be
combined with the others.

Where we differ from Ray: CombinedStopper asks every stopper about every
result (Ray's any() stops at the first that says stop), so stateful
stoppers stay consistent.
"""

import datetime

from tunerun.tune.callback import Stopper


class _NativeStopper(Stopper):
    def __call__(self, trial_id, result):
        raise TypeError(f"{type(self).__name__} runs in the C++ engine, not from Python")

    def stop_all(self):
        raise TypeError(f"{type(self).__name__} runs in the C++ engine, not from Python")

    def _native(self):
        """(kind, options, child stoppers) for bindings/stoppers_py.cpp."""
        return type(self).__name__, dict(self._options), []


class MaximumIterationStopper(_NativeStopper):
    """Stops each trial after max_iter results."""

    def __init__(self, max_iter: int):
        self._options = {"max_iter": int(max_iter)}


class TrialPlateauStopper(_NativeStopper):
    """Stops a trial once its last num_results values of `metric` have a
    standard deviation below `std` (after grace_period results; with
    metric_threshold, only once the metric is at least that good under mode)."""

    def __init__(self, metric, std=0.01, num_results=4, grace_period=4, metric_threshold=None,
                 mode=None):
        self._options = {"metric": metric, "std": std, "num_results": num_results,
                         "grace_period": grace_period, "metric_threshold": metric_threshold,
                         "mode": mode}


class ExperimentPlateauStopper(_NativeStopper):
    """Ends the experiment once the `top` best values of `metric` have a
    standard deviation of at most `std` for more than `patience` results."""

    def __init__(self, metric, std=0.001, top=10, mode="min", patience=0):
        self._options = {"metric": metric, "std": std, "top": top, "mode": mode,
                         "patience": patience}


class TimeoutStopper(_NativeStopper):
    """Ends the experiment `timeout` (seconds or a datetime.timedelta) after
    fit() starts; running trials stop at their next report."""

    def __init__(self, timeout):
        if isinstance(timeout, datetime.timedelta):
            timeout = timeout.total_seconds()
        self._options = {"timeout": float(timeout)}


class CombinedStopper(_NativeStopper):
    """Stops a trial when any of `stoppers` does, the experiment when any
    stop_all() is true."""

    def __init__(self, *stoppers):
        self._stoppers = list(stoppers)
        self._options = {}

    def _native(self):
        return "CombinedStopper", {}, self._stoppers


class FunctionStopper(Stopper):
    """Stops a trial when function(trial_id, result) is true."""

    def __init__(self, function):
        self._function = function

    def __call__(self, trial_id, result):
        return bool(self._function(trial_id, result))


class NoopStopper(Stopper):
    """Never stops anything."""
