# After Ray's Optuna example (doc/source/tune/examples/optuna_example.ipynb):
# a define-by-run space (a function of an Optuna trial with conditional
# parameters and constants returned), OptunaSearch(space=..., metric, mode),
# points_to_evaluate, and OptunaSearch over an Optuna distributions dict.
import time

import optuna

from tunerun import train, tune
from tunerun.tune.search import ConcurrencyLimiter
from tunerun.tune.search.optuna import OptunaSearch


def evaluate(step, width, height, activation):
    time.sleep(0.001)
    activation_boost = 10 if activation == "relu" else 0
    return (0.1 + width * step / 100) ** (-1) + height * 0.1 + activation_boost


def objective(config):
    for step in range(5):
        score = evaluate(step, config["width"], config["height"], config["activation"])
        train.report({"iterations": step, "mean_loss": score})


def define_by_run_func(trial):
    activation = trial.suggest_categorical("activation", ["relu", "tanh"])
    trial.suggest_float("width", 0, 20)
    trial.suggest_float("height", -100, 100)
    if activation == "relu":
        trial.suggest_float("mult", 1, 2)
    return {"constant": 3}


searcher = OptunaSearch(space=define_by_run_func, metric="mean_loss", mode="min")
algo = ConcurrencyLimiter(searcher, max_concurrent=2)
tuner = tune.Tuner(objective, tune_config=tune.TuneConfig(search_alg=algo, num_samples=8))
results = tuner.fit()
best = results.get_best_result(metric="mean_loss", mode="min")
print("Best hyperparameters found were: ", best.config)
for r in results:
    c = r.config
    assert c["constant"] == 3
    assert ("mult" in c) == (c["activation"] == "relu"), c
    assert 0 <= c["width"] <= 20 and -100 <= c["height"] <= 100

space = {
    "activation": optuna.distributions.CategoricalDistribution(["relu", "tanh"]),
    "width": optuna.distributions.FloatDistribution(0, 20),
    "height": optuna.distributions.FloatDistribution(-100, 100),
}
initial_params = [{"width": 1, "height": 2, "activation": "relu"},
                  {"width": 4, "height": 2, "activation": "relu"}]
searcher = OptunaSearch(space=space, metric="mean_loss", mode="min",
                        points_to_evaluate=initial_params)
results = tune.Tuner(objective, tune_config=tune.TuneConfig(search_alg=searcher,
                                                            num_samples=6)).fit()
configs = [r.config for r in results]
assert len(configs) == 6
assert {"width": 1, "height": 2, "activation": "relu"} in configs, configs
print(results.get_best_result(metric="mean_loss", mode="min").config)
