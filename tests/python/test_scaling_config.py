"""ScalingConfig's cluster keywords: num_workers=(min, max) makes an
elastic group, resized at checkpoints, each result recording the world
size it was computed with; placement_strategy= places the ranks over
nodes, and one that cannot place them here is refused before a trial runs;
bad values are refused with the keyword named."""

import os

import pytest

pytest.importorskip("torch")

from tunerun import train, tune  # noqa: E402
from tunerun.train.torch import TorchTrainer  # noqa: E402

import ray_trainables  # noqa: E402


def trainer(scaling, **config):
    return TorchTrainer(ray_trainables.elastic_steps, train_loop_config=config,
                        scaling_config=scaling)


def test_an_elastic_trial_starts_small_and_grows_at_a_checkpoint(storage):
    # A rank takes a third of the machine's CPUs: the first trial gets 2
    # ranks, the second starts with the 1 left and grows once the first ended.
    scaling = train.ScalingConfig(num_workers=(1, 2),
                                  resources_per_worker={"CPU": os.cpu_count() / 3})
    grid = tune.Tuner(
        trainer(scaling, sleep_s=0.25),
        param_space={"train_loop_config": {"steps": tune.grid_search([3, 20])}},
        run_config=train.RunConfig(name="elastic", storage_path=storage, verbose=0)).fit()
    assert not grid.errors
    sizes = {}
    for result in grid:
        frame = result.metrics_dataframe.sort_values("training_iteration")
        assert list(frame["world_size"]) == list(frame["seen"])  # as the ranks saw it
        sizes[result.config["train_loop_config"]["steps"]] = list(frame["world_size"])
    assert sizes[3] == [2, 2, 2]
    assert len(sizes[20]) == 20  # every step once, across the resize
    assert sizes[20][0] == 1 and sizes[20][-1] == 2


def test_strict_spread_on_one_machine_is_refused_with_each_nodes_place(storage):
    scaling = train.ScalingConfig(num_workers=2, placement_strategy="STRICT_SPREAD")
    with pytest.raises(ValueError, match="STRICT_SPREAD puts each of the 2 ranks on a node of its "
                       "own, but the local launcher has one node"):
        tune.Tuner(trainer(scaling, steps=1, sleep_s=0),
                   run_config=train.RunConfig(name="spread", storage_path=storage,
                                              verbose=0)).fit()
    assert not os.path.exists(os.path.join(storage, "spread", "experiment.db"))


@pytest.mark.parametrize("keywords, message", [
    ({"num_workers": (3, 1)}, r"num_workers.*1 <= min <= max"),
    ({"num_workers": (0, 2)}, r"num_workers.*1 <= min <= max"),
    ({"num_workers": (1, 2, 3)}, r"num_workers.*\[min, max\]"),
    ({"num_workers": "two"}, r"num_workers='two'.*\(min, max\)"),
    ({"placement_strategy": "DIAGONAL"},
     "'DIAGONAL' is not a placement strategy; use PACK, SPREAD, STRICT_PACK or STRICT_SPREAD"),
])
def test_bad_scaling_values_are_refused_naming_the_keyword(storage, keywords, message):
    with pytest.raises(ValueError, match=message):
        tune.Tuner(trainer(train.ScalingConfig(**keywords), steps=1, sleep_s=0),
                   run_config=train.RunConfig(name="bad", storage_path=storage,
                                              verbose=0)).fit()
