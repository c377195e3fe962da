# After Ray's Tune API shims (doc/source/tune/api/schedulers.rst and
# suggestion.rst: tune.create_scheduler / tune.create_searcher by name) and
# the ResultGrid guide's nested metrics (doc/source/tune/examples/
# tune_analyze_results.ipynb: nested result dicts become "a/b" columns),
# numpy values in results, and a NaN score skipped by get_best_result.
import math

import numpy as np

from tunerun import train, tune
from tunerun.tune.schedulers import create_scheduler
from tunerun.tune.search import create_searcher


def objective(config):
    for i in range(4):
        loss = np.float32((config["x"] - 1) ** 2 + 1.0 / (i + 1))
        if config["x"] > 2.5:
            loss = float("nan")
        train.report({"loss": loss, "info": {"step": np.int64(i), "lr": config["lr"]},
                      "vec_mean": np.mean(np.arange(3))})


scheduler = create_scheduler("async_hyperband", max_t=4, grace_period=1)
searcher = create_searcher("random")
results = tune.Tuner(
    objective,
    param_space={"x": tune.grid_search([0.0, 1.0, 3.0]), "lr": tune.loguniform(1e-3, 1e-1),
                 "nested": {"a": tune.choice([1, 2])}},
    tune_config=tune.TuneConfig(metric="loss", mode="min", scheduler=scheduler,
                                search_alg=searcher),
).fit()
df = results.get_dataframe()
print(df.columns.tolist())
assert "info/step" in df.columns and "info/lr" in df.columns
assert "config/nested/a" in df.columns
best = results.get_best_result()
assert best.config["x"] == 1.0
assert isinstance(best.metrics["info"], dict) and best.metrics["info"]["step"] == 3
assert best.metrics["vec_mean"] == 1.0
nan_trial = [r for r in results if r.config["x"] == 3.0][0]
assert math.isnan(nan_trial.metrics["loss"])
worst = results.get_best_result(metric="loss", mode="max", filter_nan_and_inf=True)
assert worst.config["x"] == 0.0
