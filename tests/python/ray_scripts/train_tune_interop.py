# After Ray Train's "Hyperparameter Tuning with Ray Tune" guide
# (doc/source/train/doc_code/train_tune_interop.py, tuner.py __torch_start__):
# a TorchTrainer as a Tuner's trainable, train_loop_config keys tuned and
# merged with the trainer's own, the result grid inspected.
import tunerun as ray
from tunerun import train, tune
from tunerun.train import ScalingConfig
from tunerun.train.torch import TorchTrainer
from tunerun.tune import TuneConfig, Tuner


def train_fn_per_worker(train_loop_config: dict):
    import torch
    torch.manual_seed(0)
    w = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([w], lr=train_loop_config["lr"])
    for epoch in range(train_loop_config["num_epochs"]):
        loss = ((w - 3.0) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        ray.train.report({"loss": loss.item(), "batch_size": train_loop_config["batch_size"]})


trainer = TorchTrainer(
    train_fn_per_worker,
    train_loop_config={"num_epochs": 3, "batch_size": 4},
    scaling_config=ScalingConfig(num_workers=1),
)
tuner = Tuner(
    trainer,
    param_space={"train_loop_config": {"lr": tune.grid_search([0.01, 0.1]),
                                       "batch_size": tune.choice([4, 8])}},
    tune_config=TuneConfig(metric="loss", mode="min", max_concurrent_trials=2),
    run_config=train.RunConfig(name="train_tune_interop"),
)
result_grid = tuner.fit()
if result_grid.errors:
    print("At least one trial failed.")
best_result = result_grid.get_best_result()
assert best_result.config["train_loop_config"]["lr"] == 0.1
assert best_result.config["train_loop_config"]["num_epochs"] == 3
results_df = result_grid.get_dataframe()
print("Shortest training time:", results_df["time_total_s"].min())
for result in result_grid:
    assert result.error is None, result.error
    assert result.metrics["batch_size"] in (4, 8)
