"""Ray Tune's TuneConfig(chdir_to_trial_dir=...): True runs each trial in its
trial directory; False keeps the script's working directory."""

import os

import pytest

from tunerun import tune

import ray_trainables


@pytest.mark.parametrize("chdir", [True, False])
def test_chdir_to_trial_dir(storage, chdir):
    grid = tune.Tuner(ray_trainables.reports_its_directory,
                      tune_config=tune.TuneConfig(chdir_to_trial_dir=chdir),
                      run_config=tune.RunConfig(name="cwd", storage_path=storage,
                                                verbose=0)).fit()
    metrics = grid[0].metrics
    if chdir:
        assert os.path.samefile(metrics["cwd"], metrics["trial_dir"])
    else:
        assert os.path.samefile(metrics["cwd"], os.getcwd())
