# After Ray Train's "Hyperparameter Tuning with Ray Tune" guide, Ray 2.x's
# XGBoostTrainer in a Tuner (doc/source/train/doc_code/tuner.py, __basic__
# and __xgboost__): params merged with the trainer's, num_boost_round and the
# number of workers tuned per trial. The breast-cancer CSV is written
# locally from scikit-learn's copy of it (no s3 here).
import sklearn.datasets
import xgboost  # noqa: F401  (the trainer's library)

import tunerun as ray
from tunerun import tune
from tunerun.train import RunConfig, ScalingConfig
from tunerun.train.xgboost import XGBoostTrainer
from tunerun.tune import Tuner

frame = sklearn.datasets.load_breast_cancer(as_frame=True).frame
frame.to_csv("breast_cancer.csv", index=False)
dataset = ray.data.read_csv("breast_cancer.csv")

trainer = XGBoostTrainer(
    label_column="target",
    params={"objective": "binary:logistic", "eval_metric": ["logloss", "error"],
            "max_depth": 4},
    datasets={"train": dataset},
)
tuner = Tuner(
    trainer,
    param_space={"params": {"max_depth": tune.choice([4, 5, 6])}},
    tune_config=tune.TuneConfig(metric="train-logloss", mode="min", num_samples=2),
)
first = tuner.fit()
assert len(first) == 2 and not first.errors

trainer = XGBoostTrainer(
    label_column="target",
    params={"objective": "binary:logistic", "eval_metric": ["logloss", "error"],
            "max_depth": 4},
    num_boost_round=10,
    datasets={"train": dataset},
)
param_space = {
    "num_boost_round": tune.randint(5, 20),
    # Merged with the trainer's params; max_depth overrides the trainer's.
    "params": {"min_child_weight": tune.uniform(0.8, 1.0), "max_depth": tune.randint(1, 5)},
    # The number of distributed workers, per trial.
    "scaling_config": ScalingConfig(num_workers=tune.grid_search([1, 2])),
}
tuner = Tuner(
    trainable=trainer,
    run_config=RunConfig(name="test_tuner"),
    param_space=param_space,
    tune_config=tune.TuneConfig(mode="min", metric="train-logloss", num_samples=2,
                                max_concurrent_trials=2),
)
result_grid = tuner.fit()
assert len(result_grid) == 4 and not result_grid.errors, result_grid.errors
best = result_grid.get_best_result()
print(best.metrics["train-logloss"], best.metrics["train-error"])
assert best.metrics["train-error"] < 0.1
model = XGBoostTrainer.get_model(best.checkpoint)
rounds = {r.config["scaling_config"].num_workers for r in result_grid}
assert rounds == {1, 2}
assert 5 <= model.num_boosted_rounds() < 20
