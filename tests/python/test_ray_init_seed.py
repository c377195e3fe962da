"""Ray's FAQ recipes: np.random.seed() before fit() repeats a run's sampled
configs when TuneConfig has no seed; ray.init(num_cpus=) bounds what the
trials hold at once."""

import numpy as np

import tunerun
from tunerun import train, tune

import trainables


def sampled(storage, name, seed):
    np.random.seed(seed)
    grid = tune.Tuner(trainables.quadratic, param_space={"x": tune.uniform(0, 1), "steps": 1},
                      tune_config=tune.TuneConfig(num_samples=3),
                      run_config=train.RunConfig(name=name, storage_path=storage,
                                                 verbose=0)).fit()
    return [r.config["x"] for r in grid]


def test_numpy_seed_repeats_the_sampled_configs(storage):
    first = sampled(storage, "a", 1234)
    assert sampled(storage, "b", 1234) == first
    assert sampled(storage, "c", 99) != first


def test_init_num_cpus_bounds_the_trials_running_at_once(storage):
    tunerun.init(num_cpus=1)
    try:
        grid = tune.Tuner(trainables.sleeps, param_space={"i": tune.grid_search([0, 1, 2])},
                          run_config=train.RunConfig(name="one_cpu", storage_path=storage,
                                                     verbose=0)).fit()
    finally:
        tunerun.shutdown()
    windows = sorted((r.metrics["start"], r.metrics["end"]) for r in grid)
    assert len(windows) == 3
    assert all(end <= next_start for (_, end), (next_start, _) in zip(windows, windows[1:]))
