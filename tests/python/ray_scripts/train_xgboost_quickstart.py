# After Ray Train's "Get Started with Distributed Training using XGBoost"
# (doc/source/train/getting-started-xgboost.rst,
# doc/source/train/doc_code/xgboost_quickstart.py, __xgboost_ray__): each
# worker reads its dataset shard, xgboost.train over the workers with
# RayTrainReportCallback, the model loaded from the result's checkpoint. The
# iris CSVs are written locally from scikit-learn's copy (no s3 here).
import os

import sklearn.datasets
import xgboost

import tunerun as ray
import tunerun.train
from tunerun.train.xgboost import RayTrainReportCallback, XGBoostTrainer

iris = sklearn.datasets.load_iris(as_frame=True).frame
os.makedirs("iris/train", exist_ok=True)
os.makedirs("iris/val", exist_ok=True)
iris.iloc[::2].to_csv("iris/train/1.csv", index=False)
iris.iloc[1::2].to_csv("iris/val/1.csv", index=False)

# 1. The data as Ray Data Datasets.
train_dataset = ray.data.read_csv("iris/train")
eval_dataset = ray.data.read_csv("iris/val")


def train_func():
    # 2. This worker's shards as xgboost.DMatrix.
    train_shard = ray.train.get_dataset_shard("train")
    eval_shard = ray.train.get_dataset_shard("eval")
    train_df = train_shard.materialize().to_pandas()
    eval_df = eval_shard.materialize().to_pandas()
    train_X = train_df.drop("target", axis=1)
    train_y = train_df["target"]
    eval_X = eval_df.drop("target", axis=1)
    eval_y = eval_df["target"]
    dtrain = xgboost.DMatrix(train_X, label=train_y)
    deval = xgboost.DMatrix(eval_X, label=eval_y)
    # 3. Parameters.
    params = {"tree_method": "approx", "objective": "reg:squarederror", "eta": 1e-4,
              "subsample": 0.5, "max_depth": 2}
    # 4. Data-parallel training over the workers.
    xgboost.train(params, dtrain=dtrain, evals=[(deval, "validation")], num_boost_round=10,
                  callbacks=[RayTrainReportCallback()])


# 5. Scale: two workers (one CPU each here; the guide gives them two).
scaling_config = ray.train.ScalingConfig(num_workers=2, resources_per_worker={"CPU": 1})
# 6. Launch the job.
trainer = XGBoostTrainer(train_func, scaling_config=scaling_config,
                         datasets={"train": train_dataset, "eval": eval_dataset})
result = trainer.fit()

# 7. Load the trained model.
with result.checkpoint.as_directory() as checkpoint_dir:
    model_path = os.path.join(checkpoint_dir, RayTrainReportCallback.CHECKPOINT_NAME)
    model = xgboost.Booster()
    model.load_model(model_path)
assert model.num_boosted_rounds() == 10
assert "validation-rmse" in result.metrics
print(result.metrics["validation-rmse"])
