"""Ray Tune's trial directories: TuneConfig(chdir_to_trial_dir=...) (True runs each
trial in its trial directory), trial_dirname_creator and trial_name_creator."""

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


def test_trial_dirname_creator_names_each_trial_s_directory(storage):
    # Ray's TuneConfig(trial_dirname_creator=): a function of the trial.
    grid = tune.Tuner(
        ray_trainables.returns_score, param_space={"a": tune.grid_search([1, 2]), "b": 0},
        tune_config=tune.TuneConfig(
            trial_dirname_creator=lambda trial: f"{trial.trainable_name}_a{trial.config['a']}"),
        run_config=tune.RunConfig(name="named", storage_path=storage, verbose=0)).fit()
    names = sorted(os.path.basename(r.path) for r in grid)
    assert names == ["returns_score_a1", "returns_score_a2"]
    assert all(os.path.isdir(r.path) for r in grid)


def test_a_trial_dirname_used_twice_is_an_error(storage):
    with pytest.raises(ValueError, match="trial_dirname_creator.*earlier trial"):
        tune.Tuner(ray_trainables.returns_score,
                   param_space={"a": tune.grid_search([1, 2]), "b": 0},
                   tune_config=tune.TuneConfig(trial_dirname_creator=lambda trial: "same"),
                   run_config=tune.RunConfig(name="twice", storage_path=storage,
                                             verbose=0)).fit()


def test_trial_name_creator_names_the_reporter_s_rows(storage, capsys):
    tune.Tuner(ray_trainables.returns_score, param_space={"a": 3, "b": 0},
               tune_config=tune.TuneConfig(trial_name_creator=lambda trial: f"t{trial.config['a']}"),
               run_config=tune.RunConfig(name="rows", storage_path=storage, verbose=0,
                                         progress_reporter=tune.CLIReporter())).fit()
    assert "\nt3 " in capsys.readouterr().out
