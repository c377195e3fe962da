# After Ray's search-space reference (doc/source/tune/doc_code/key_concepts.py,
# __config_start__, and the FAQ's conditional spaces): every domain, sample_from
# reading other keys, a grid over tuples.
import numpy as np

from tunerun import train, tune

config = {
    "uniform": tune.uniform(-5, -1),
    "quniform": tune.quniform(3.2, 5.4, 0.2),
    "loguniform": tune.loguniform(1e-4, 1e-1),
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
    "nested": {"a": tune.randint(5, 10),
               "b": tune.sample_from(lambda spec: np.random.randint(0, spec.config.nested.a))},
}


def check(config):
    assert -5 <= config["uniform"] <= -1
    assert -21 <= config["qrandint"] <= 12 and config["qrandint"] % 3 == 0
    assert 1e-4 <= config["loguniform"] <= 1e-1
    assert config["choice"] in ("a", "b", "c")
    assert abs(config["func"] - config["uniform"] * 0.01) < 1e-12
    assert 0 <= config["nested"]["b"] < config["nested"]["a"]
    train.report({"grid": config["grid"]})


results = tune.Tuner(check, param_space=config,
                     tune_config=tune.TuneConfig(num_samples=2)).fit()
assert not results.errors, results.errors
assert sorted(r.metrics["grid"] for r in results) == [32, 32, 64, 64, 128, 128]


def _iter():
    for a in range(5, 7):
        for b in range(a):
            yield a, b


def pair(config):
    a, b = config["ab"]
    train.report({"product": a * b})


results = tune.Tuner(pair, param_space={"ab": tune.grid_search(list(_iter()))}).fit()
assert len(results) == 11
assert max(r.metrics["product"] for r in results) == 30
