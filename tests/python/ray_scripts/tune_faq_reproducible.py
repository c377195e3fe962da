# After Ray's Tune FAQ (doc/source/tune/doc_code/faq.py): seeding numpy
# before the Tuner repeats the sampled configs; a seeded trainable repeats its
# result; large data through tune.with_parameters.
import numpy as np

from tunerun import train, tune


def train_func(config):
    np.random.seed(config["seed"])
    train.report({"result": np.random.uniform(0, 100, size=1).item()})


def run():
    np.random.seed(1234)
    grid = tune.Tuner(
        train_func,
        tune_config=tune.TuneConfig(num_samples=4,
                                    search_alg=tune.search.BasicVariantGenerator()),
        param_space={"seed": tune.randint(0, 1000)},
    ).fit()
    return sorted((r.config["seed"], r.metrics["result"]) for r in grid)


first, second = run(), run()
assert first == second, (first, second)


def with_data(config, num_epochs=5, data=None):
    total = 0.0
    for i in range(num_epochs):
        total += float(data.sum())
    train.report({"total": total})


data = np.random.random(size=100_000)
grid = tune.Tuner(tune.with_parameters(with_data, num_epochs=2, data=data)).fit()
assert abs(grid[0].metrics["total"] - 2 * data.sum()) < 1e-6
