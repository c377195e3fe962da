# After Ray's "Running Tune experiments with Optuna" example
# (doc/source/tune/examples/optuna_example.ipynb): OptunaSearch under a
# ConcurrencyLimiter, ASHA, a stop on training_iteration, the best config.
import time

from tunerun import tune
from tunerun.tune.schedulers import AsyncHyperBandScheduler
from tunerun.tune.search import ConcurrencyLimiter
from tunerun.tune.search.optuna import OptunaSearch


def evaluate(step, width, height, activation):
    time.sleep(0.01)
    activation_boost = 10 if activation == "relu" else 0
    return (0.1 + width * step / 100) ** (-1) + height * 0.1 + activation_boost


def objective(config):
    for step in range(config["steps"]):
        score = evaluate(step, config["width"], config["height"], config["activation"])
        tune.report({"iterations": step, "mean_loss": score})


searcher = ConcurrencyLimiter(OptunaSearch(), max_concurrent=2)
tuner = tune.Tuner(
    objective,
    tune_config=tune.TuneConfig(metric="mean_loss", mode="min", search_alg=searcher,
                                scheduler=AsyncHyperBandScheduler(), num_samples=6),
    param_space={"steps": 20, "width": tune.uniform(0, 20), "height": tune.uniform(-100, 100),
                 "activation": tune.choice(["relu", "tanh"])},
)
results = tuner.fit()
print("Best hyperparameters found were: ", results.get_best_result().config)
assert len(results) == 6
assert not results.errors
