# After Ray's "Analyzing Tune Experiment Results" guide
# (doc/source/tune/examples/tune_analyze_results.ipynb): a trainable that
# checkpoints and sometimes fails, then the ResultGrid read back as the guide
# reads it: num_errors/num_terminated, get_best_result with a scope,
# get_dataframe(filter_metric=, filter_mode=), Result.metrics_dataframe,
# Result.best_checkpoints, the errors, and ResultGrid reloaded from its path.
import json
import os
import tempfile

from tunerun import train, tune
from tunerun.train import Checkpoint


def train_mnist_like(config):
    if config["lr"] > 0.09 and config["momentum"] > 0.85:
        raise RuntimeError("diverged")
    acc = 0.1
    for i in range(8):
        acc = acc + config["lr"] * (1 - acc) * config["momentum"]
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "state.json"), "w") as f:
                json.dump({"iter": i, "acc": acc}, f)
            train.report({"mean_accuracy": acc, "loss": 1 - acc},
                         checkpoint=Checkpoint.from_directory(tmp))


storage_path = os.path.abspath("ray_results")
exp_name = "tune_analyzing_results"
tuner = tune.Tuner(
    train_mnist_like,
    param_space={"lr": tune.grid_search([0.001, 0.01, 0.1]),
                 "momentum": tune.grid_search([0.8, 0.9])},
    tune_config=tune.TuneConfig(metric="mean_accuracy", mode="max"),
    run_config=train.RunConfig(
        name=exp_name, storage_path=storage_path,
        checkpoint_config=train.CheckpointConfig(
            checkpoint_score_attribute="mean_accuracy", num_to_keep=5)))
result_grid = tuner.fit()

experiment_path = os.path.join(storage_path, exp_name)
print(f"Loading results from {experiment_path}...")
restored_tuner = tune.Tuner.restore(experiment_path, trainable=train_mnist_like)
result_grid = restored_tuner.get_results()

if result_grid.errors:
    print("One of the trials failed!")
else:
    print("No errors!")
num_results = len(result_grid)
print("Number of results:", num_results)
assert num_results == 6
assert result_grid.num_errors == 1, result_grid.num_errors
assert result_grid.num_terminated == 5, result_grid.num_terminated
for i, result in enumerate(result_grid):
    if result.error:
        print(f"Trial #{i} had an error:", result.error)
        continue
    print(f"Trial #{i} finished successfully with a mean accuracy metric of:",
          result.metrics["mean_accuracy"])

results_df = result_grid.get_dataframe()
print(results_df[["training_iteration", "mean_accuracy"]])
print("Shortest training time:", results_df["time_total_s"].min())
print("Longest training time:", results_df["time_total_s"].max())

best_result_df = result_grid.get_dataframe(filter_metric="mean_accuracy", filter_mode="max")
print(best_result_df[["training_iteration", "mean_accuracy"]])
assert len(best_result_df) == 6
ok = best_result_df["mean_accuracy"].dropna() >= results_df["mean_accuracy"].dropna() - 1e-12
assert ok.all() and len(ok) == 5

best_result = result_grid.get_best_result()
assert best_result.config["lr"] == 0.1 and best_result.config["momentum"] == 0.8, best_result.config
best_result = result_grid.get_best_result(metric="loss", mode="min", scope="last")
assert best_result.config["lr"] == 0.1
worst = result_grid.get_best_result(metric="mean_accuracy", mode="min", scope="all")
assert worst.config["lr"] == 0.001

print(best_result.config)
print(best_result.path)
assert os.path.isdir(best_result.path)
print(best_result.checkpoint)
with best_result.checkpoint.as_directory() as d:
    with open(os.path.join(d, "state.json")) as f:
        assert json.load(f)["iter"] == 7
print(best_result.metrics)
df = best_result.metrics_dataframe
print(df[["training_iteration", "mean_accuracy"]])
assert len(df) == 8
assert list(df["training_iteration"]) == list(range(1, 9))
assert len(best_result.best_checkpoints) == 5
for ckpt, metrics in best_result.best_checkpoints:
    assert isinstance(ckpt, Checkpoint)
    assert "mean_accuracy" in metrics
ax = None
for result in result_grid:
    if result.error:
        continue
    label = f"lr={result.config['lr']:.3f}, momentum={result.config['momentum']}"
    assert result.metrics_dataframe["mean_accuracy"].is_monotonic_increasing, label
failed = [r for r in result_grid if r.error]
assert len(failed) == 1 and "diverged" in str(failed[0].error)
