# After Ray's Searcher API reference (doc/source/tune/api/suggestion.rst,
# "Implementing your own Search Algorithm", and python/ray/tune/search/
# searcher.py's docstring): a Searcher subclass with set_search_properties,
# suggest and on_trial_complete, returning Searcher.FINISHED when done, under
# a ConcurrencyLimiter; then Repeater over a model-based searcher.
import random

from tunerun import train, tune
from tunerun.tune.search import ConcurrencyLimiter, Repeater, Searcher
from tunerun.tune.search.optuna import OptunaSearch


class LocalSearch(Searcher):
    """Suggests x near the best x seen so far."""

    def __init__(self, metric="loss", mode="min", budget=12):
        super().__init__(metric=metric, mode=mode)
        self.budget = budget
        self.configurations = {}
        self.best = None
        self.completed = []

    def set_search_properties(self, metric, mode, config, **spec):
        if metric:
            self._metric = metric
        if mode:
            self._mode = mode
        return True

    def suggest(self, trial_id):
        if len(self.configurations) >= self.budget:
            return Searcher.FINISHED
        center = self.best[0] if self.best else 0.0
        config = {"x": center + random.uniform(-2, 2)}
        self.configurations[trial_id] = config
        return config

    def on_trial_complete(self, trial_id, result=None, error=False):
        self.completed.append(trial_id)
        if result and not error:
            loss = result[self.metric]
            if self.best is None or loss < self.best[1]:
                self.best = (self.configurations[trial_id]["x"], loss)


def objective(config):
    for i in range(3):
        train.report({"loss": (config["x"] - 3.0) ** 2 + 1.0 / (i + 1)})


searcher = LocalSearch()
algo = ConcurrencyLimiter(searcher, max_concurrent=2)
results = tune.Tuner(objective, tune_config=tune.TuneConfig(
    search_alg=algo, metric="loss", mode="min", num_samples=-1)).fit()
assert len(results) == 12, len(results)
assert len(searcher.completed) == 12
best = results.get_best_result()
print("best x:", best.config["x"], best.metrics["loss"])
assert abs(best.metrics["loss"] - ((best.config["x"] - 3.0) ** 2 + 1 / 3)) < 1e-9

# Repeater: each config evaluated `repeat` times, the mean fed back
re_search = Repeater(OptunaSearch(), repeat=2, set_index=True)


def noisy(config):
    train.report({"loss": config["x"] ** 2 + 0.01 * config["__trial_index__"]})


results = tune.Tuner(noisy, param_space={"x": tune.uniform(-1, 1)},
                     tune_config=tune.TuneConfig(search_alg=re_search, metric="loss",
                                                 mode="min", num_samples=6)).fit()
xs = sorted(r.config["x"] for r in results)
assert len(xs) == 6
assert all(xs[i] == xs[i + 1] for i in range(0, 6, 2)), xs
assert sorted(r.config["__trial_index__"] for r in results) == [0, 0, 0, 1, 1, 1]
