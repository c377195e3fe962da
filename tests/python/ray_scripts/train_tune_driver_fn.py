# After Ray Train's "Hyperparameter Tuning with Ray Tune" guide
# (doc/source/train/user-guides/hyperparameter-optimization.rst,
# doc/source/train/doc_code/train_tune_interop.py, __quickstart__ and
# __fault_tolerance__): a Tune trial function builds a TorchTrainer and fits
# it; TuneReportCallback propagates the trainer's results to the Tuner. The
# trial's resources are the trainer's workers (tune.with_resources with the
# ScalingConfig), as the guide's multi-trial section asks of a fixed cluster.
import random
import tempfile

import tunerun as ray
import tunerun.train
import tunerun.train.torch
import tunerun.tune
from tunerun.tune.integration.ray_train import TuneReportCallback


# [1] The Ray Train worker code.
def train_fn_per_worker(train_loop_config: dict):
    lr = train_loop_config["lr"]
    print(ray.train.get_context().get_world_size(), ray.train.get_context().get_world_rank(),
          train_loop_config)
    checkpoint = ray.train.get_checkpoint()
    start = 0
    if checkpoint:
        with checkpoint.as_directory() as temp_checkpoint_dir:
            with open(f"{temp_checkpoint_dir}/epoch") as f:
                start = int(f.read()) + 1
    for epoch in range(start, 2):
        with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
            with open(f"{temp_checkpoint_dir}/epoch", "w") as f:
                f.write(str(epoch))
            ray.train.report(
                {"loss": lr * random.random(), "world_size":
                 ray.train.get_context().get_world_size()},
                checkpoint=ray.train.Checkpoint.from_directory(temp_checkpoint_dir))


# [2] The function that launches the Ray Train run, one per Tune trial.
def train_driver_fn(config: dict):
    num_workers = config["num_workers"]
    trainer = ray.train.torch.TorchTrainer(
        train_fn_per_worker,
        train_loop_config=config["train_loop_config"],
        scaling_config=ray.train.ScalingConfig(num_workers=num_workers),
        run_config=ray.train.RunConfig(
            # [3] A unique name per run: the trial id.
            name=f"train-trial_id={ray.tune.get_context().get_trial_id()}",
            # [4] Propagate the reported results to the Tuner.
            callbacks=[TuneReportCallback()],
            failure_config=ray.train.FailureConfig(max_failures=1),
        ),
    )
    trainer.fit()


tuner = ray.tune.Tuner(
    ray.tune.with_resources(train_driver_fn, ray.train.ScalingConfig(num_workers=2)),
    param_space={
        "num_workers": ray.tune.choice([1, 2]),
        "train_loop_config": {
            "lr": ray.tune.grid_search([1e-3, 3e-4]),
            "batch_size": ray.tune.grid_search([32, 64]),
        },
    },
    run_config=ray.tune.RunConfig(name="tune_train_example",
                                  failure_config=ray.tune.FailureConfig(max_failures=1)),
    # [5] At most this many Train driver processes at once.
    tune_config=ray.tune.TuneConfig(max_concurrent_trials=2),
)
results = tuner.fit()

best = results.get_best_result(metric="loss", mode="min")
print(best)
assert len(results) == 4 and not results.errors
for result in results:
    assert result.metrics["training_iteration"] == 2
    assert result.metrics["world_size"] == result.config["num_workers"]
    assert "checkpoint_path" in result.metrics
