# After Ray's Tune "Key Concepts" guide (doc/source/tune/doc_code/key_concepts.py):
# a function and a class trainable, num_samples, a search space, HyperBand,
# BayesOpt, and reading the results.
from tunerun import tune
from tunerun.tune.schedulers import HyperBandScheduler
from tunerun.tune.search.bayesopt import BayesOptSearch


def objective(x, a, b):
    return a * (x**2) + b


def trainable(config):
    for x in range(20):
        tune.report({"score": objective(x, config["a"], config["b"])})


class Trainable(tune.Trainable):
    def setup(self, config):
        self.x = 0
        self.a = config["a"]
        self.b = config["b"]

    def step(self):
        score = objective(self.x, self.a, self.b)
        self.x += 1
        return {"score": score}


tune.Tuner(trainable, param_space={"a": 2, "b": 4}).fit()
grid = tune.Tuner(trainable, param_space={"a": 2, "b": 4},
                  tune_config=tune.TuneConfig(num_samples=3)).fit()
assert len(grid) == 3

space = {"a": tune.uniform(0, 1), "b": tune.uniform(0, 1)}
grid = tune.Tuner(Trainable, param_space=space,
                  tune_config=tune.TuneConfig(num_samples=3, scheduler=HyperBandScheduler(
                      metric="score", mode="max", max_t=5))).fit()
assert len(grid) == 3

results = tune.Tuner(
    trainable,
    tune_config=tune.TuneConfig(metric="score", mode="min",
                                search_alg=BayesOptSearch(random_search_steps=4),
                                num_samples=5),
    run_config=tune.RunConfig(stop={"training_iteration": 20}),
    param_space={"a": tune.uniform(0, 1), "b": tune.uniform(0, 20)},
).fit()
best_result = results.get_best_result()
best_config = best_result.config
best_logdir = best_result.path
best_metrics = best_result.metrics
best_result_df = best_result.metrics_dataframe
assert best_metrics["training_iteration"] == 20
assert len(best_result_df) == 20
df = results.get_dataframe(filter_metric="score", filter_mode="max")
assert len(df) == 5
print(best_config, best_metrics["score"])
