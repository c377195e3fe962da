# After Ray's HyperOpt example (doc/source/tune/examples/hyperopt_example.ipynb,
# python/ray/tune/examples/hyperopt_conditional_search_space_example.py's
# tune-domain half): HyperOptSearch over a tune search space with
# points_to_evaluate, under a ConcurrencyLimiter and ASHA.
import time

from tunerun import train, tune
from tunerun.tune.schedulers import AsyncHyperBandScheduler
from tunerun.tune.search import ConcurrencyLimiter
from tunerun.tune.search.hyperopt import HyperOptSearch


def evaluation_fn(step, width, height):
    time.sleep(0.001)
    return (0.1 + width * step / 100) ** (-1) + height * 0.1


def objective(config):
    for step in range(config["steps"]):
        score = evaluation_fn(step, config["width"], config["height"])
        train.report({"iterations": step, "mean_loss": score})


initial_params = [
    {"width": 1, "height": 2, "activation": "relu"},
    {"width": 4, "height": 2, "activation": "tanh"},
]
searcher = HyperOptSearch(points_to_evaluate=initial_params)
searcher = ConcurrencyLimiter(searcher, max_concurrent=2)
search_space = {
    "steps": 10,
    "width": tune.uniform(0, 20),
    "height": tune.uniform(-100, 100),
    "activation": tune.choice(["relu", "tanh"]),
}
tuner = tune.Tuner(
    objective,
    tune_config=tune.TuneConfig(metric="mean_loss", mode="min", search_alg=searcher,
                                scheduler=AsyncHyperBandScheduler(), num_samples=10),
    param_space=search_space,
)
results = tuner.fit()
print("Best hyperparameters found were: ", results.get_best_result().config)
configs = [r.config for r in results]
assert len(configs) == 10
assert {"steps": 10, "width": 1, "height": 2, "activation": "relu"} in configs, configs[:2]
