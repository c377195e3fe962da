# After Ray's "How to Enable Fault Tolerance in Ray Tune" guide
# (doc/source/tune/tutorials/tune-fault-tolerance.rst and
# doc/source/tune/doc_code/fault_tolerance.py): an experiment interrupted
# partway, Tuner.can_restore on its path, Tuner.restore(path, trainable=,
# resume_errored=True) finishing it, and tune.with_parameters kept across the
# restore.
import json
import os
import tempfile

import numpy as np

from tunerun import train, tune
from tunerun.train import Checkpoint

storage_path = os.path.abspath("ray_results")
exp_name = "tune_fault_tolerance_guide"
path = os.path.join(storage_path, exp_name)
marker = os.path.abspath("crash_once")


def trainable(config, data=None):
    start = 0
    checkpoint = train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as d:
            with open(os.path.join(d, "state.json")) as f:
                start = json.load(f)["epoch"] + 1
    for epoch in range(start, 6):
        if epoch == 3 and config["lr"] == 0.1 and not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("simulated node failure")
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "state.json"), "w") as f:
                json.dump({"epoch": epoch}, f)
            train.report({"score": float(data.sum()) * config["lr"] + epoch, "epoch": epoch},
                         checkpoint=Checkpoint.from_directory(tmp))


data = np.ones(1000)
assert not tune.Tuner.can_restore(path)
tuner = tune.Tuner(
    tune.with_parameters(trainable, data=data),
    param_space={"lr": tune.grid_search([0.01, 0.1])},
    run_config=train.RunConfig(storage_path=storage_path, name=exp_name),
    tune_config=tune.TuneConfig(metric="score", mode="max"))
results = tuner.fit()
assert results.num_errors == 1

if tune.Tuner.can_restore(path):
    tuner = tune.Tuner.restore(path, trainable=tune.with_parameters(trainable, data=data),
                               resume_errored=True)
else:
    raise AssertionError("the experiment should be restorable")
results = tuner.fit()
assert results.num_errors == 0, [r.error for r in results]
for r in results:
    assert r.metrics["epoch"] == 5, r.metrics
best = results.get_best_result()
assert best.config["lr"] == 0.1
# the failed trial continued from its checkpoint: its history has every epoch once
epochs = list(best.metrics_dataframe["epoch"])
assert epochs[-3:] == [3, 4, 5], epochs
