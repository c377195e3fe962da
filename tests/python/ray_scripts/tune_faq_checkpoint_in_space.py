# After Ray's Tune FAQ, "iterative experimentation"
# (doc/source/tune/doc_code/faq.py, __iter_experimentation_*): the best trial's
# checkpoint goes into the next experiment's param_space.
import os
import random
import tempfile

import torch

from tunerun import train, tune
from tunerun.train import Checkpoint


def trainable(config):
    for epoch in range(1, config["num_epochs"]):
        with tempfile.TemporaryDirectory() as tempdir:
            torch.save({"model_state_dict": {"x": config["hyperparam"]}},
                       os.path.join(tempdir, "model.pt"))
            train.report({"score": random.random()},
                         checkpoint=Checkpoint.from_directory(tempdir))


result_grid = tune.Tuner(
    trainable,
    param_space={"num_epochs": 4, "hyperparam": tune.grid_search([1, 2, 3])},
    tune_config=tune.TuneConfig(metric="score", mode="max"),
).fit()
best_checkpoint = result_grid.get_best_result().checkpoint


def resumed(config):
    checkpoint: Checkpoint = config["start_from_checkpoint"]
    with checkpoint.as_directory() as checkpoint_dir:
        state = torch.load(os.path.join(checkpoint_dir, "model.pt"))
    for epoch in range(1, config["num_epochs"]):
        train.report({"score": random.random(), "x": state["model_state_dict"]["x"]})


result_grid = tune.Tuner(
    resumed,
    param_space={"num_epochs": 3, "hyperparam": tune.grid_search([4, 5, 6]),
                 "start_from_checkpoint": best_checkpoint},
    tune_config=tune.TuneConfig(metric="score", mode="max"),
).fit()
assert not result_grid.errors, result_grid.errors
assert len({r.metrics["x"] for r in result_grid}) == 1
