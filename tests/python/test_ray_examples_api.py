"""What Ray's own example scripts use beyond the guides, with Ray's
documented outcome: a second run under the same experiment name, the
scheduler examples' mock trainable, Ray 2.0-2.6 class checkpoints that are a
file path, a step() asking for a checkpoint, TorchCheckpoint, a
ConcurrencyLimiter around a Python searcher, BayesOptSearch's
utility_kwargs, and the module paths the examples import from."""

import math
import os

import pytest
import torch

from tunerun import train, tune
from tunerun.tune.schedulers import HyperBandScheduler
from tunerun.tune.search import ConcurrencyLimiter, Searcher
from tunerun.tune.search.bayesopt import BayesOptSearch
from tunerun.tune.search.optuna import OptunaSearch
from tunerun.tune.utils.mock_trainable import MyTrainableClass
from tunerun.train.torch import TorchCheckpoint

import ray_trainables


def run_config(storage, name, **kwargs):
    return tune.RunConfig(name=name, storage_path=storage, verbose=0, **kwargs)


def test_a_name_used_again_runs_again(storage, capfd):
    # Ray: a second fit() under an existing name runs (Ray writes into the same
    # folder); here it gets the next free name and says so.
    def fit():
        return tune.Tuner(ray_trainables.returns_score,
                          param_space={"a": tune.grid_search([1, 2]), "b": 0},
                          run_config=run_config(storage, "again")).fit()
    first, second = fit(), fit()
    assert sorted(r.metrics["score"] for r in second) == [1, 4]
    assert second.experiment_path == os.path.join(storage, "again_2")
    assert first.experiment_path == os.path.join(storage, "again")
    assert "this run is 'again_2'" in capfd.readouterr().err


def test_the_mock_trainable_follows_its_curve(storage):
    grid = tune.Tuner(
        MyTrainableClass, param_space={"width": tune.grid_search([2, 5]), "height": 10},
        tune_config=tune.TuneConfig(metric="episode_reward_mean", mode="max",
                                    scheduler=HyperBandScheduler(max_t=4)),
        run_config=run_config(storage, "mock", stop={"training_iteration": 3})).fit()
    for result in grid:
        t, width = result.metrics["training_iteration"], result.config["width"]
        assert result.metrics["episode_reward_mean"] == pytest.approx(10 * math.tanh(t / width))
    assert grid.get_best_result().config["width"] == 2


def test_a_checkpoint_path_comes_back_under_the_restored_directory(storage, tmp_path):
    flag = tmp_path / "flag"
    flag.touch()
    grid = tune.Tuner(
        ray_trainables.SavesAFilePath, param_space={"flag": str(flag)},
        run_config=run_config(storage, "path",
                              checkpoint_config=train.CheckpointConfig(checkpoint_frequency=1),
                              failure_config=train.FailureConfig(max_failures=1))).fit()
    (result,) = grid
    assert result.error is None
    assert result.metrics["count"] == 4
    assert result.metrics["loaded"] == "state/count.txt"


def test_a_step_asking_for_a_checkpoint_gets_one(storage):
    grid = tune.Tuner(
        ray_trainables.AsksForACheckpoint,
        run_config=run_config(storage, "asks", stop={"training_iteration": 3},
                              checkpoint_config=train.CheckpointConfig(
                                  checkpoint_at_end=False))).fit()
    (result,) = grid
    assert [m["training_iteration"] for _, m in result.best_checkpoints] == [2]


def test_a_torch_checkpoint_loads_into_the_model(storage):
    grid = tune.Tuner(ray_trainables.reports_a_torch_checkpoint, param_space={"seed": 3},
                      run_config=run_config(storage, "torch")).fit()
    (result,) = grid
    model = TorchCheckpoint.from_directory(result.checkpoint.path).get_model(
        torch.nn.Linear(2, 1))
    loaded = float(model.weight.sum() + model.bias.sum())
    assert loaded == pytest.approx(result.metrics["weight_sum"])


def test_a_torch_checkpoint_of_a_whole_model():
    import shutil
    model = torch.nn.Linear(3, 1)
    whole = TorchCheckpoint.from_model(model)
    weights = TorchCheckpoint.from_state_dict(model.state_dict())
    try:
        assert torch.equal(whole.get_model().weight, model.weight)
        with pytest.raises(ValueError, match="pass the model"):
            weights.get_model()
    finally:  # made outside a trial: no report() removes them
        shutil.rmtree(whole.path)
        shutil.rmtree(weights.path)


class CountsLive(Searcher):
    """Suggests x = 1, 2, ...; remembers the most trials live at once."""

    def __init__(self):
        super().__init__()
        self.live = self.most = self.suggested = 0

    def suggest(self, trial_id):
        self.suggested += 1
        self.live += 1
        self.most = max(self.most, self.live)
        return {"a": self.suggested, "b": 0}

    def on_trial_complete(self, trial_id, result=None, error=False):
        self.live -= 1


def test_a_concurrency_limiter_around_a_python_searcher(storage):
    searcher = CountsLive()
    grid = tune.Tuner(ray_trainables.returns_score,
                      tune_config=tune.TuneConfig(
                          search_alg=ConcurrencyLimiter(searcher, max_concurrent=1),
                          num_samples=4),
                      run_config=run_config(storage, "limited")).fit()
    assert sorted(r.metrics["score"] for r in grid) == [1, 4, 9, 16]
    assert searcher.most == 1


def define_by_run(trial):
    trial.suggest_int("a", 1, 3)
    return {"b": 0}


def test_a_concurrency_limiter_around_a_define_by_run_search(storage):
    search = OptunaSearch(space=define_by_run, metric="score", mode="min", seed=1)
    grid = tune.Tuner(ray_trainables.returns_score,
                      tune_config=tune.TuneConfig(
                          search_alg=ConcurrencyLimiter(search, max_concurrent=2),
                          num_samples=3),
                      run_config=run_config(storage, "dbr")).fit()
    assert len(grid) == 3 and grid.num_errors == 0


def test_bayesopt_takes_its_utility_kwargs(storage):
    with pytest.warns(UserWarning, match="expected improvement"):
        BayesOptSearch(utility_kwargs={"kind": "ucb", "kappa": 2.5, "xi": 0.0})
    search = BayesOptSearch(utility_kwargs={"kind": "ei", "xi": 0.0}, metric="score",
                            mode="min", random_search_steps=2)
    grid = tune.Tuner(ray_trainables.returns_score,
                      param_space={"a": tune.uniform(-1, 1), "b": 0},
                      tune_config=tune.TuneConfig(search_alg=search, num_samples=3),
                      run_config=run_config(storage, "bo")).fit()
    assert len(grid) == 3
    with pytest.raises(ValueError, match="warm_start"):
        BayesOptSearch(analysis=object())


def test_the_modules_the_examples_import_from():
    from tunerun.tune import result
    from tunerun.tune.tune_config import TuneConfig
    from tunerun.tune.tuner import Tuner
    assert TuneConfig is tune.TuneConfig and Tuner is tune.Tuner
    assert (result.SHOULD_CHECKPOINT, result.TRAINING_ITERATION, result.DONE) == \
        ("should_checkpoint", "training_iteration", "done")


def test_an_argparse_namespace_in_the_param_space_reaches_the_trainable(storage):
    # Ray's mnist_pytorch_trainable puts its argparse Namespace in the config.
    import argparse
    grid = tune.Tuner(ray_trainables.reads_args_lr,
                      param_space={"args": argparse.Namespace(lr=0.1), "x": 2},
                      run_config=run_config(storage, "objects")).fit()
    assert grid[0].metrics["score"] == 0.2
    assert grid[0].config["args"] == argparse.Namespace(lr=0.1)
