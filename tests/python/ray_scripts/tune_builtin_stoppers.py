# After Ray's Stopper API reference (doc/source/tune/api/stoppers.rst) and
# the stopping guide's built-in stoppers (doc/source/tune/tutorials/
# tune-stopping.rst): MaximumIterationStopper, TrialPlateauStopper,
# ExperimentPlateauStopper, TimeoutStopper, CombinedStopper, a Stopper
# subclass, and TuneConfig(time_budget_s=).
import time

from tunerun import train, tune
from tunerun.tune import Stopper
from tunerun.tune.stopper import (CombinedStopper, ExperimentPlateauStopper,
                                  MaximumIterationStopper, TimeoutStopper,
                                  TrialPlateauStopper)


def trainable(config):
    for i in range(100):
        value = config["base"] if i >= config["plateau_at"] else config["base"] + 10 - i
        train.report({"mean_accuracy": value, "loss": -value})
        time.sleep(0.001)


space = {"base": tune.grid_search([1.0, 2.0]), "plateau_at": 4}

results = tune.Tuner(trainable, param_space=space,
                     run_config=train.RunConfig(stop=MaximumIterationStopper(max_iter=7))).fit()
assert [r.metrics["training_iteration"] for r in results] == [7, 7]

stopper = TrialPlateauStopper(metric="mean_accuracy", std=0.001, num_results=4, grace_period=4)
results = tune.Tuner(trainable, param_space=space,
                     run_config=train.RunConfig(stop=stopper)).fit()
for r in results:
    assert r.metrics["training_iteration"] < 100, r.metrics["training_iteration"]

stopper = CombinedStopper(MaximumIterationStopper(max_iter=50),
                          TrialPlateauStopper(metric="mean_accuracy"))
results = tune.Tuner(trainable, param_space=space,
                     run_config=train.RunConfig(stop=stopper)).fit()
for r in results:
    assert r.metrics["training_iteration"] <= 50


class CustomStopper(Stopper):
    def __init__(self):
        self.should_stop = False

    def __call__(self, trial_id, result):
        if not self.should_stop and result["mean_accuracy"] <= 1.0:
            self.should_stop = True
        return self.should_stop

    def stop_all(self):
        return self.should_stop


results = tune.Tuner(trainable, param_space=space,
                     tune_config=tune.TuneConfig(max_concurrent_trials=1),
                     run_config=train.RunConfig(stop=CustomStopper())).fit()
iters = sorted(r.metrics.get("training_iteration", 0) for r in results)
assert iters[0] < 100, iters

results = tune.Tuner(trainable, param_space=space,
                     run_config=train.RunConfig(stop=TimeoutStopper(60))).fit()
assert len(results) == 2 and results.num_errors == 0

stopper = ExperimentPlateauStopper(metric="mean_accuracy", mode="max", patience=2, top=2)
results = tune.Tuner(trainable, param_space={"base": tune.grid_search([1.0, 2.0, 3.0, 4.0]),
                                             "plateau_at": 0},
                     tune_config=tune.TuneConfig(max_concurrent_trials=1),
                     run_config=train.RunConfig(stop=stopper)).fit()
print([r.metrics.get("training_iteration") for r in results])

results = tune.Tuner(trainable, param_space=space,
                     tune_config=tune.TuneConfig(time_budget_s=60)).fit()
assert len(results) == 2
