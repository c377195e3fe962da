# After Ray's Tune FAQ, grid search (doc/source/tune/doc_code/faq.py,
# __grid_search_start__ and __grid_search_2_start__): grids multiply, constants
# and sample_from ride along, num_samples repeats the grid.
import numpy as np

from tunerun import train, tune


def train_fn(config):
    train.report({"metric": config["foo"] * (2 if config["bar"] else 1) + config["qux"]})


parameters = {
    "qux": tune.sample_from(lambda spec: 2 + 2),
    "bar": tune.grid_search([True, False]),
    "foo": tune.grid_search([1, 2, 3]),
    "baz": "asd",
}
grid = tune.Tuner(train_fn, param_space=parameters).fit()
assert len(grid) == 6
assert {r.config["baz"] for r in grid} == {"asd"}
assert sorted(r.metrics["metric"] for r in grid) == [5, 6, 6, 7, 8, 10]

tuner = tune.Tuner(
    lambda config: train.report({"layers": sum(config["nn_layers"])}),
    run_config=train.RunConfig(name="my_trainable"),
    param_space={
        "alpha": tune.uniform(100, 200),
        "beta": tune.sample_from(lambda spec: spec.config.alpha * np.random.normal()),
        "nn_layers": [tune.grid_search([16, 64]), tune.grid_search([16, 64])],
    },
    tune_config=tune.TuneConfig(num_samples=2),
)
grid = tuner.fit()
assert len(grid) == 8
assert sorted({r.metrics["layers"] for r in grid}) == [32, 80, 128]
