"""What Ray's own example scripts use beyond the guides, with Ray's
documented outcome: a second run under the same experiment name."""

import os

from tunerun import tune

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
