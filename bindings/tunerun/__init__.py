"""tunerun: Ray Tune's Python API over tunerun's C++ engine.

    from tunerun import tune, train

    def train_func(config):                      # travels by value (see _reference.py)
        for step in range(10):
            train.report({"loss": (config["x"] - 3) ** 2 / (step + 1)})

    tuner = tune.Tuner(train_func, param_space={"x": tune.uniform(-5, 5)},
                       tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=8))
    best = tuner.fit().get_best_result()

From a build tree: PYTHONPATH=build/bindings /usr/bin/python3 script.py
"""

from tunerun import _lazy

_lazy.install(globals(), {"air": "tunerun.air", "train": "tunerun.train", "tune": "tunerun.tune",
                          "data": "tunerun.data", "cloudpickle": "cloudpickle",
                          "exceptions": "tunerun.exceptions",
                          "load": "tunerun.tune.result_grid:load",
                          **{name: f"tunerun._ray:{name}"
                             for name in ("init", "is_initialized", "shutdown", "cluster_resources",
                                          "available_resources")},
                          # ray.remote & co.: an in-process layer (tunerun/_remote.py)
                          **{name: f"tunerun._remote:{name}"
                             for name in ("ObjectRef", "get", "put", "remote", "wait")}})
