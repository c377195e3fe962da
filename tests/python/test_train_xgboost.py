"""train.xgboost over Debian's python3-xgboost: XGBoostTrainer trains one
booster over its ranks' shards (xgboost's collective, rank 0 hosting the
tracker), RayTrainReportCallback reports each round and checkpoints the
booster; Ray 2.0-2.42's label_column/params form runs and tunes."""

import os

import pytest

xgboost = pytest.importorskip("xgboost")
np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")
pytest.importorskip("torch")

import tunerun as ray  # noqa: E402
from tunerun import train, tune  # noqa: E402
from tunerun.train.xgboost import RayTrainReportCallback, XGBoostTrainer  # noqa: E402


def frame(rows=160):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, 3))
    out = pd.DataFrame(x, columns=["a", "b", "c"])
    out["target"] = (x[:, 0] - x[:, 1] > 0).astype(int)
    return out


PARAMS = {"objective": "binary:logistic", "eval_metric": ["logloss", "error"],
          "tree_method": "hist"}


def train_func(config):
    shard = train.get_dataset_shard("train").materialize().to_pandas()
    dtrain = xgboost.DMatrix(shard.drop("target", axis=1), label=shard["target"])
    booster = xgboost.train(PARAMS, dtrain, num_boost_round=config["rounds"],
                            evals=[(dtrain, "train")], verbose_eval=False,
                            callbacks=[RayTrainReportCallback(frequency=2)])
    # Every rank holds the same booster, trained over both shards.
    context = train.get_context()
    booster.save_model(os.path.join(config["out"], f"rank_{context.get_world_rank()}.json"))
    with open(os.path.join(config["out"], f"rows_{context.get_world_rank()}"), "w") as f:
        f.write(str(len(shard)))


def test_two_ranks_train_one_booster_and_report_every_round(storage, tmp_path):
    trainer = XGBoostTrainer(
        train_func, train_loop_config={"rounds": 5, "out": str(tmp_path)},
        scaling_config=train.ScalingConfig(num_workers=2),
        datasets={"train": ray.data.from_pandas(frame())},
        run_config=train.RunConfig(name="xgb", storage_path=storage, verbose=0))
    result = trainer.fit()
    history = result.metrics_dataframe.sort_values("training_iteration")
    assert len(history) == 6  # five rounds, and the final booster's checkpoint
    assert list(history["train-logloss"])[:5] == sorted(history["train-logloss"][:5],
                                                        reverse=True)
    assert result.metrics["train-error"] < 0.2
    assert (tmp_path / "rows_0").read_text() == "80" and (tmp_path / "rows_1").read_text() == "80"
    assert (tmp_path / "rank_0.json").read_text() == (tmp_path / "rank_1.json").read_text()
    assert os.listdir(result.checkpoint.path) == [RayTrainReportCallback.CHECKPOINT_NAME]
    model = XGBoostTrainer.get_model(result.checkpoint)
    assert model.num_boosted_rounds() == 5


def test_ray_2_0_form_trains_on_its_datasets_and_tunes_its_params(storage):
    data = ray.data.from_pandas(frame())
    train_ds, valid_ds = data.train_test_split(test_size=0.25)
    trainer = XGBoostTrainer(label_column="target", params=PARAMS, num_boost_round=3,
                             datasets={"train": train_ds, "valid": valid_ds},
                             scaling_config=train.ScalingConfig(num_workers=1),
                             run_config=train.RunConfig(storage_path=storage, verbose=0))
    grid = tune.Tuner(trainer,
                      param_space={"params": {"max_depth": tune.grid_search([1, 3])},
                                   "num_boost_round": 4},
                      tune_config=tune.TuneConfig(metric="valid-logloss", mode="min"),
                      run_config=train.RunConfig(name="xgb_tune", storage_path=storage,
                                                 verbose=0)).fit()
    assert not grid.errors, grid.errors
    depths = set()
    for result in grid:
        depths.add(result.config["train_loop_config"]["params"]["max_depth"])
        assert {"train-logloss", "valid-logloss", "valid-error"} <= set(result.metrics)
        assert XGBoostTrainer.get_model(result.checkpoint).num_boosted_rounds() == 4
    assert depths == {1, 3}


def test_the_ray_2_0_form_needs_a_train_dataset():
    with pytest.raises(ValueError, match="label_column and datasets with a \"train\" dataset"):
        XGBoostTrainer(label_column="target", datasets={"valid": [{"target": 1}]})
