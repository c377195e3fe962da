# After Ray Train's "Hyperparameter Tuning with Ray Tune" guide, Ray 2.x's
# Tuner over a trainer (doc/source/train/doc_code/tuner.py, __torch__ and
# __result_grid_inspection__): train_loop_config keys merged with the
# trainer's own, and the number of workers tuned per trial with a
# ScalingConfig holding a grid_search. A small linear model in place of
# Ray's torch_linear_example module.
import os
import tempfile

import torch

from tunerun import train, tune
from tunerun.train import RunConfig, ScalingConfig
from tunerun.train.torch import TorchTrainer, prepare_data_loader, prepare_model
from tunerun.tune import Tuner


def linear_train_func(config):
    torch.manual_seed(0)
    x = torch.linspace(0, 1, 64).unsqueeze(1)
    data = torch.utils.data.TensorDataset(x, 2 * x + 1)
    loader = prepare_data_loader(torch.utils.data.DataLoader(data,
                                                             batch_size=config["batch_size"]))
    model = prepare_model(torch.nn.Sequential(torch.nn.Linear(1, config["hidden_size"]),
                                              torch.nn.Linear(config["hidden_size"], 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    for epoch in range(config["epochs"]):
        for xb, yb in loader:
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with tempfile.TemporaryDirectory() as d:
            torch.save(model.state_dict(), os.path.join(d, "model.pt"))
            train.report({"loss": loss.item(), "epoch": epoch,
                          "workers": train.get_context().get_world_size()},
                         checkpoint=train.Checkpoint.from_directory(d))


trainer = TorchTrainer(
    train_loop_per_worker=linear_train_func,
    train_loop_config={"lr": 1e-2, "batch_size": 4, "epochs": 3},
    scaling_config=ScalingConfig(num_workers=1, use_gpu=False),
)

param_space = {
    # Merged with the TorchTrainer's train_loop_config.
    "train_loop_config": {
        "hidden_size": tune.randint(1, 4),
        "batch_size": tune.choice([4, 8]),
    },
    # The number of distributed workers, per trial.
    "scaling_config": ScalingConfig(num_workers=tune.grid_search([1, 2])),
}

tuner = Tuner(
    trainable=trainer,
    run_config=RunConfig(name="test_tuner"),
    param_space=param_space,
    tune_config=tune.TuneConfig(mode="min", metric="loss", num_samples=2,
                                max_concurrent_trials=2),
)
result_grid = tuner.fit()

num_results = len(result_grid)
assert num_results == 4
if result_grid.errors:
    print("At least one trial failed.")
best_result = result_grid.get_best_result()
best_checkpoint = best_result.checkpoint
assert os.path.exists(os.path.join(best_checkpoint.path, "model.pt"))
results_df = result_grid.get_dataframe()
print("Shortest training time:", results_df["time_total_s"].min())
for result in result_grid:
    if result.error:
        print("The trial had an error:", result.error)
        continue
    print("The trial finished successfully with the metrics:", result.metrics["loss"])
    assert result.config["train_loop_config"]["epochs"] == 3
    assert result.metrics["workers"] == result.config["scaling_config"].num_workers
assert sorted(r.config["scaling_config"].num_workers for r in result_grid) == [1, 1, 2, 2]
assert not result_grid.errors
