"""Ray Tune's stopping guide: tune.stopper's classes in RunConfig(stop=...),
with Ray's documented outcomes."""

import datetime
import os

import pytest

from tunerun import tune
from tunerun.tune.stopper import (CombinedStopper, ExperimentPlateauStopper, FunctionStopper,
                                  MaximumIterationStopper, NoopStopper, TimeoutStopper,
                                  TrialPlateauStopper)

import ray_trainables


def fit(storage, name, stop, trainable=ray_trainables.plateau, num_samples=1):
    return tune.Tuner(trainable, param_space={},
                      tune_config=tune.TuneConfig(num_samples=num_samples),
                      run_config=tune.RunConfig(name=name, storage_path=storage, verbose=0,
                                                stop=stop)).fit()


def iterations(grid):
    return sorted(r.metrics["training_iteration"] for r in grid)


def test_maximum_iteration_stopper(storage):
    grid = fit(storage, "max", MaximumIterationStopper(max_iter=5), num_samples=2)
    assert iterations(grid) == [5, 5]
    assert all(r.status == "TERMINATED" for r in grid)


def test_trial_plateau_stopper(storage):
    # From step 3 on the loss is flat: after the grace period, a window of 4
    # equal values has std 0 < 0.01.
    grid = fit(storage, "plateau", TrialPlateauStopper(metric="loss"))
    assert iterations(grid) == [7]


def test_trial_plateau_stopper_waits_for_its_threshold(storage):
    grid = fit(storage, "threshold",
               TrialPlateauStopper(metric="loss", metric_threshold=0.1, mode="min"))
    assert iterations(grid) == [20]  # the loss never gets to 0.1


def test_experiment_plateau_stopper_ends_the_experiment(storage):
    grid = fit(storage, "experiment", ExperimentPlateauStopper(metric="loss", top=3, mode="min"))
    assert iterations(grid)[0] < 20


def test_timeout_stopper_takes_a_timedelta(storage):
    grid = fit(storage, "timeout", TimeoutStopper(datetime.timedelta(seconds=0)))
    assert all(r.metrics is None or r.metrics["training_iteration"] < 20 for r in grid)


def test_combined_stopper_stops_at_the_first(storage):
    stop = CombinedStopper(MaximumIterationStopper(12), TrialPlateauStopper(metric="loss"),
                           FunctionStopper(lambda trial_id, result: False), NoopStopper())
    assert iterations(fit(storage, "combined", stop)) == [7]
    stop = CombinedStopper(MaximumIterationStopper(2), TrialPlateauStopper(metric="loss"))
    assert iterations(fit(storage, "combined2", stop)) == [2]


def test_function_stopper(storage):
    grid = fit(storage, "function",
               FunctionStopper(lambda trial_id, result: result["training_iteration"] >= 3))
    assert iterations(grid) == [3]


def test_a_bad_stopper_option_is_refused_before_anything_runs(storage):
    with pytest.raises(ValueError, match="TrialPlateauStopper: num_results"):
        tune.Tuner(ray_trainables.plateau,
                   run_config=tune.RunConfig(name="bad", storage_path=storage, verbose=0,
                                             stop=TrialPlateauStopper(metric="loss",
                                                                      num_results=0)))
    assert not os.path.exists(storage)
