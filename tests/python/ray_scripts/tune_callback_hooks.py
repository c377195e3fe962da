# After Ray's Callback API reference and "How to Use Tune Callbacks"
# (doc/source/tune/api/callbacks.rst, doc/source/tune/tutorials/
# tune-metrics.rst): a Callback overriding setup, on_trial_start,
# on_trial_result, on_trial_complete, on_trial_error, on_checkpoint and
# on_experiment_end, given to RunConfig(callbacks=[...]).
import os
import tempfile

from tunerun import train, tune
from tunerun.train import Checkpoint
from tunerun.tune import Callback


class MyCallback(Callback):
    def __init__(self):
        self.events = []
        self.results = {}

    def setup(self, stop=None, num_samples=None, total_num_samples=None, **info):
        self.events.append(("setup", total_num_samples))

    def on_trial_start(self, iteration, trials, trial, **info):
        self.events.append(("start", trial.trial_id))

    def on_trial_result(self, iteration, trials, trial, result, **info):
        print(f"Got result: {result['metric']}")
        self.results.setdefault(trial.trial_id, []).append(result["metric"])

    def on_checkpoint(self, iteration, trials, trial, checkpoint, **info):
        self.events.append(("checkpoint", trial.trial_id))

    def on_trial_complete(self, iteration, trials, trial, **info):
        self.events.append(("complete", trial.trial_id))

    def on_trial_error(self, iteration, trials, trial, **info):
        self.events.append(("error", trial.trial_id))

    def on_experiment_end(self, trials, **info):
        self.events.append(("end", len(trials)))


def train_fn(config):
    for i in range(5):
        if config["fail"] and i == 2:
            raise ValueError("boom")
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "x"), "w") as f:
                f.write(str(i))
            train.report({"metric": config["x"] + i}, checkpoint=Checkpoint.from_directory(tmp))


callback = MyCallback()
tuner = tune.Tuner(
    train_fn,
    param_space={"x": tune.grid_search([1, 2]), "fail": tune.grid_search([False, True])},
    run_config=train.RunConfig(callbacks=[callback]),
)
results = tuner.fit()
assert results.num_errors == 2
kinds = [e[0] for e in callback.events]
assert kinds[0] == "setup"
assert kinds.count("start") == 4, kinds
assert kinds.count("complete") == 2, kinds
assert kinds.count("error") == 2, kinds
assert kinds.count("checkpoint") == 2 * 5 + 2 * 2, kinds
assert kinds[-1] == "end" and callback.events[-1][1] == 4
assert sorted(len(v) for v in callback.results.values()) == [2, 2, 5, 5]
for r in results:
    if not r.config["fail"]:
        assert callback.results[r.metrics["trial_id"]] == [r.config["x"] + i for i in range(5)]
