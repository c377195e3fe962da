# After Ray's "How to Use Tune Callbacks" and logging guides
# (doc/source/tune/tutorials/tune-metrics.rst, tune-output.rst): a Callback
# that sees each result, CSV and JSON logger callbacks.
import os

from tunerun import train, tune
from tunerun.tune import Callback
from tunerun.tune.logger import CSVLoggerCallback, JsonLoggerCallback


class MyCallback(Callback):
    def __init__(self):
        self.seen = []

    def on_trial_result(self, iteration, trials, trial, result, **info):
        self.seen.append(result["metric"])
        print(f"Got result: {result['metric']}")


def train_fn(config):
    for i in range(3):
        train.report({"metric": config["a"] * (i + 1)})


callback = MyCallback()
results = tune.Tuner(
    train_fn,
    param_space={"a": tune.grid_search([1, 2])},
    run_config=train.RunConfig(callbacks=[callback, CSVLoggerCallback(),
                                          JsonLoggerCallback()]),
).fit()
assert sorted(callback.seen) == [1, 2, 2, 3, 4, 6]
for result in results:
    assert os.path.exists(os.path.join(result.path, "progress.csv")), os.listdir(result.path)
    assert os.path.exists(os.path.join(result.path, "result.json"))
