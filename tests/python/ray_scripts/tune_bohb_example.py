# After Ray's BOHB example (doc/source/tune/examples/bohb_example.ipynb):
# TuneBOHB with HyperBandForBOHB, a ConcurrencyLimiter, time_attr
# training_iteration, over a function objective that reports no checkpoint
# (Ray restarts a paused trial that has none from its start).
import time

from tunerun import train, tune
from tunerun.tune.schedulers.hb_bohb import HyperBandForBOHB
from tunerun.tune.search import ConcurrencyLimiter
from tunerun.tune.search.bohb import TuneBOHB


def evaluate(step, width, height, activation):
    time.sleep(0.001)
    activation_boost = 10 if activation == "relu" else 0
    return (0.1 + width * step / 100) ** (-1) + height * 0.1 + activation_boost


def objective(config):
    for step in range(config["steps"]):
        score = evaluate(step, config["width"], config["height"], config["activation"])
        train.report({"iterations": step, "mean_loss": score})


search_space = {
    "steps": 9,
    "width": tune.uniform(0, 20),
    "height": tune.uniform(-100, 100),
    "activation": tune.choice(["relu", "tanh"]),
}
bohb_hyperband = HyperBandForBOHB(time_attr="training_iteration", max_t=9,
                                  reduction_factor=3, stop_last_trials=False)
bohb_search = TuneBOHB()
bohb_search = ConcurrencyLimiter(bohb_search, max_concurrent=2)
tuner = tune.Tuner(
    objective,
    run_config=train.RunConfig(name="bohb_exp", stop={"training_iteration": 9}),
    tune_config=tune.TuneConfig(metric="mean_loss", mode="min", scheduler=bohb_hyperband,
                                search_alg=bohb_search, num_samples=8),
    param_space=search_space,
)
results = tuner.fit()
print("Best hyperparameters found were: ", results.get_best_result().config)
assert len(results) == 8 and results.num_errors == 0
assert max(r.metrics["training_iteration"] for r in results) <= 9

