# After Ray's search-space API reference (doc/source/tune/api/search_space.rst,
# "Random Distributions API" and its example config): every quantized and
# log domain, randn/qrandn, sample_from with numpy, BasicVariantGenerator with
# points_to_evaluate, and ConcurrencyLimiter over a searcher
# (doc/source/tune/api/suggestion.rst).
import numpy as np

from tunerun import train, tune
from tunerun.tune.search import BasicVariantGenerator, ConcurrencyLimiter
from tunerun.tune.search.optuna import OptunaSearch

config = {
    "uniform": tune.uniform(-5, -1),
    "quniform": tune.quniform(3.2, 5.4, 0.2),
    "loguniform": tune.loguniform(1e-4, 1e-2),
    "qloguniform": tune.qloguniform(1e-4, 1e-1, 5e-5),
    "randn": tune.randn(10, 2),
    "qrandn": tune.qrandn(10, 2, 0.2),
    "randint": tune.randint(-9, 15),
    "qrandint": tune.qrandint(-21, 12, 3),
    "lograndint": tune.lograndint(1, 10),
    "qlograndint": tune.qlograndint(1, 10, 2),
    "choice": tune.choice(["a", "b", "c"]),
    "func": tune.sample_from(lambda spec: spec.config.uniform * 0.01),
    "grid": tune.grid_search([32, 64, 128]),
    "np_func": tune.sample_from(lambda _: np.random.uniform(100) ** 2),
}


def trainable(config):
    train.report({"score": config["uniform"] + config["randint"], **{
        k: v for k, v in config.items() if not isinstance(v, str)}})


results = tune.Tuner(trainable, param_space=config,
                     tune_config=tune.TuneConfig(num_samples=4)).fit()
assert len(results) == 12
for r in results:
    c = r.config
    assert -5 <= c["uniform"] <= -1
    assert 3.2 - 1e-9 <= c["quniform"] <= 5.4 + 1e-9
    assert abs(c["quniform"] / 0.2 - round(c["quniform"] / 0.2)) < 1e-6
    assert 1e-4 <= c["loguniform"] <= 1e-2
    assert abs(c["qloguniform"] / 5e-5 - round(c["qloguniform"] / 5e-5)) < 1e-6
    assert abs(c["qrandn"] / 0.2 - round(c["qrandn"] / 0.2)) < 1e-6
    assert isinstance(c["randint"], int) and -9 <= c["randint"] < 15
    assert isinstance(c["qrandint"], int) and c["qrandint"] % 3 == 0 and -21 <= c["qrandint"] <= 12
    assert isinstance(c["lograndint"], int) and 1 <= c["lograndint"] < 10
    assert c["qlograndint"] % 2 == 0 and 1 <= c["qlograndint"] <= 10
    assert c["choice"] in ("a", "b", "c")
    assert abs(c["func"] - c["uniform"] * 0.01) < 1e-12
    assert c["grid"] in (32, 64, 128)
df = results.get_dataframe()
assert sorted(df["config/grid"].unique()) == [32, 64, 128]

# BasicVariantGenerator: the points first, then random samples
searcher = BasicVariantGenerator(points_to_evaluate=[{"a": 2, "b": 2}, {"a": 1}],
                                 max_concurrent=2)


def objective(config):
    train.report({"score": config["a"] ** 2 + config["b"] ** 2})


results = tune.Tuner(objective, param_space={"a": tune.uniform(0, 1), "b": tune.uniform(0, 1)},
                     tune_config=tune.TuneConfig(search_alg=searcher, num_samples=4,
                                                 metric="score", mode="max")).fit()
configs = [r.config for r in results]
assert len(configs) == 4
assert {"a": 2, "b": 2} in configs
assert any(c["a"] == 1 and 0 <= c["b"] <= 1 for c in configs)
assert results.get_best_result().config == {"a": 2, "b": 2}

# ConcurrencyLimiter over a model-based searcher
algo = ConcurrencyLimiter(OptunaSearch(), max_concurrent=2)
results = tune.Tuner(objective, param_space={"a": tune.uniform(0, 1), "b": tune.uniform(0, 1)},
                     tune_config=tune.TuneConfig(search_alg=algo, num_samples=6,
                                                 metric="score", mode="min")).fit()
assert len(results) == 6 and results.num_errors == 0
print(results.get_best_result().config)
