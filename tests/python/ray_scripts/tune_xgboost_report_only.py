# After Ray 2.0-2.6's XGBoost example in users' repositories: TuneReportCallback
# with a metrics mapping ({reported name: "<eval>-<metric>"}) and a random search.
import numpy as np
import xgboost as xgb

from tunerun import tune
from tunerun.tune.integration.xgboost import TuneReportCallback


def train_fn(config):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 5))
    y = x @ np.array([1.0, -2.0, 0.5, 0.0, 3.0]) + rng.normal(scale=0.1, size=400)
    dtrain = xgb.DMatrix(x[:300], label=y[:300])
    dvalid = xgb.DMatrix(x[300:], label=y[300:])
    xgb.train({"objective": "reg:squarederror", "max_depth": config["max_depth"],
               "eta": config["eta"], "nthread": 1},
              dtrain, num_boost_round=8, evals=[(dvalid, "valid")], verbose_eval=False,
              callbacks=[TuneReportCallback({"rmse": "valid-rmse"})])


results = tune.Tuner(
    train_fn,
    param_space={"max_depth": tune.randint(2, 6), "eta": tune.uniform(0.1, 0.5)},
    tune_config=tune.TuneConfig(metric="rmse", mode="min", num_samples=3),
).fit()
best = results.get_best_result()
assert best.metrics["training_iteration"] == 8
assert best.checkpoint is None
assert best.metrics["rmse"] < 3.0, best.metrics
