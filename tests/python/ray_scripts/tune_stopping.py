# After Ray's "How to Define Stopping Criteria" guide
# (doc/source/tune/doc_code/stopping.py): a stop dict, a stop function, a Stopper
# class with stop_all, and ASHA; the guide's own asserts.
from tunerun import tune
from tunerun.tune import Stopper
from tunerun.tune.schedulers import AsyncHyperBandScheduler


def my_trainable(config):
    i = 1
    while True:
        tune.report({"mean_accuracy": min(i / 10, 1.0)})
        i += 1


result_grid = tune.Tuner(
    my_trainable,
    run_config=tune.RunConfig(stop={"training_iteration": 10, "mean_accuracy": 0.8}),
).fit()
final_iter = result_grid[0].metrics["training_iteration"]
assert final_iter == 8, final_iter


def stop_fn(trial_id: str, result: dict) -> bool:
    return result["mean_accuracy"] >= 0.8 or result["training_iteration"] >= 10


result_grid = tune.Tuner(my_trainable, run_config=tune.RunConfig(stop=stop_fn)).fit()
final_iter = result_grid[0].metrics["training_iteration"]
assert final_iter == 8, final_iter


class CustomStopper(Stopper):
    def __init__(self):
        self.should_stop = False

    def __call__(self, trial_id: str, result: dict) -> bool:
        if not self.should_stop and result["mean_accuracy"] >= 0.8:
            self.should_stop = True
        return self.should_stop

    def stop_all(self) -> bool:
        return self.should_stop


result_grid = tune.Tuner(
    my_trainable,
    run_config=tune.RunConfig(stop=CustomStopper()),
    tune_config=tune.TuneConfig(num_samples=2),
).fit()
for result in result_grid:
    final_iter = result.metrics.get("training_iteration", 0)
    assert final_iter <= 8, final_iter

result_grid = tune.Tuner(
    my_trainable,
    run_config=tune.RunConfig(stop={"training_iteration": 10}),
    tune_config=tune.TuneConfig(scheduler=AsyncHyperBandScheduler(time_attr="training_iteration"),
                                num_samples=2, metric="mean_accuracy", mode="max"),
).fit()
assert len(result_grid) == 2
