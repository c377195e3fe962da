# After Ray's "Tuning XGBoost hyperparameters with Ray Tune" example
# (doc/source/tune/examples/tune-xgboost.ipynb, python/ray/tune/examples/
# xgboost_example.py): breast-cancer data from scikit-learn, xgboost.train with
# TuneReportCheckpointCallback, ASHA, the best booster loaded back.
import sklearn.datasets
import sklearn.metrics
import xgboost as xgb
from sklearn.model_selection import train_test_split

from tunerun import tune
from tunerun.tune.integration.xgboost import TuneReportCheckpointCallback
from tunerun.tune.schedulers import ASHAScheduler


def train_breast_cancer(config: dict):
    data, labels = sklearn.datasets.load_breast_cancer(return_X_y=True)
    train_x, test_x, train_y, test_y = train_test_split(data, labels, test_size=0.25,
                                                        random_state=0)
    train_set = xgb.DMatrix(train_x, label=train_y)
    test_set = xgb.DMatrix(test_x, label=test_y)
    xgb.train(config, train_set, evals=[(test_set, "eval")], verbose_eval=False,
              num_boost_round=10,
              callbacks=[TuneReportCheckpointCallback(frequency=1)])


search_space = {
    "objective": "binary:logistic",
    "eval_metric": ["logloss", "error"],
    "max_depth": tune.randint(1, 9),
    "min_child_weight": tune.choice([1, 2, 3]),
    "subsample": tune.uniform(0.5, 1.0),
    "eta": tune.loguniform(1e-4, 1e-1),
    "nthread": 1,
}
scheduler = ASHAScheduler(max_t=10, grace_period=1, reduction_factor=2)
tuner = tune.Tuner(
    train_breast_cancer,
    tune_config=tune.TuneConfig(metric="eval-logloss", mode="min", scheduler=scheduler,
                                num_samples=4),
    param_space=search_space,
)
results = tuner.fit()
best = results.get_best_result()
assert not results.errors, results.errors
accuracy = 1.0 - best.metrics["eval-error"]
print(f"Best model parameters: {best.config}")
print(f"Best model total accuracy: {accuracy:.4f}")
booster = TuneReportCheckpointCallback.get_model(best.checkpoint)
data, labels = sklearn.datasets.load_breast_cancer(return_X_y=True)
predictions = booster.predict(xgb.DMatrix(data)) > 0.5
assert sklearn.metrics.accuracy_score(labels, predictions) > 0.85
