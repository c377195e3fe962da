"""A Ray Tune script on tunerun: an MLP on Fashion-MNIST (Debian's
dataset-fashion-mnist), 2-rank DDP trials, TPE + ASHA, checkpoints.

    PYTHONPATH=build/bindings /usr/bin/python3 examples/python/fashion_mnist.py runs
    PYTHONPATH=build/bindings /usr/bin/python3 examples/python/fashion_mnist.py runs --quick

The Ray Tune original is at the end of this file: the import lines are the
only differences that matter (and storage_path, which Ray puts in ~/ray_results).
"""

import argparse
import gzip
import os
import tempfile

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

from tunerun import train, tune
from tunerun.train.torch import TorchTrainer, prepare_data_loader, prepare_model

DATA = os.environ.get("TUNERUN_FASHION_MNIST", "/usr/share/datasets/fashion-mnist")


def load_split(kind, limit):
    with gzip.open(os.path.join(DATA, f"{kind}-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
    with gzip.open(os.path.join(DATA, f"{kind}-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    x = torch.tensor(images[:limit], dtype=torch.float32) / 255.0
    return TensorDataset((x - 0.2860) / 0.3530, torch.tensor(labels[:limit], dtype=torch.long))


def make_model(hidden):
    return torch.nn.Sequential(torch.nn.Linear(784, hidden), torch.nn.ReLU(),
                               torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                               torch.nn.Linear(hidden, 10))


def train_func(config):
    torch.manual_seed(0)
    model = prepare_model(make_model(config["hidden"]))
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])
    loader = prepare_data_loader(DataLoader(load_split("train", config["train_size"]),
                                            batch_size=config["batch_size"], shuffle=True))
    test = DataLoader(load_split("t10k", None), batch_size=1000)
    start = 0
    if (ckpt := train.get_checkpoint()):
        with ckpt.as_directory() as d:
            state = torch.load(os.path.join(d, "model.pt"))
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            start = state["epoch"] + 1
    for epoch in range(start, config["epochs"]):
        if hasattr(loader.sampler, "set_epoch"):
            loader.sampler.set_epoch(epoch)
        model.train()
        total = 0.0
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(x)
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in test:
                correct += (model(x).argmax(1) == y).sum().item()
        with tempfile.TemporaryDirectory() as d:
            if train.get_context().get_world_rank() == 0:
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                            "epoch": epoch}, os.path.join(d, "model.pt"))
            train.report({"accuracy": correct / len(test.dataset),
                          "loss": total / len(loader.sampler)},
                         checkpoint=train.Checkpoint.from_directory(d))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("storage_path")
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    args = parser.parse_args()
    epochs, samples, train_size = (2, 2, 6000) if args.quick else (10, 8, 60000)

    trainer = TorchTrainer(train_func, scaling_config=train.ScalingConfig(num_workers=2),
                           train_loop_config={"epochs": epochs, "batch_size": 128,
                                              "train_size": train_size})
    tuner = tune.Tuner(
        trainer,
        param_space={"train_loop_config": {"lr": tune.loguniform(3e-4, 3e-3),
                                           "hidden": tune.choice([256, 512])}},
        tune_config=tune.TuneConfig(
            metric="accuracy", mode="max", num_samples=samples,
            scheduler=tune.schedulers.ASHAScheduler(max_t=epochs, grace_period=1),
            search_alg=tune.search.TPESearch(seed=1)),
        run_config=train.RunConfig(name="mnist", storage_path=args.storage_path,
                                   stop={"training_iteration": epochs},
                                   checkpoint_config=train.CheckpointConfig(num_to_keep=2),
                                   failure_config=train.FailureConfig(max_failures=2)))
    results = tuner.fit()
    best = results.get_best_result()
    print(best.config, best.metrics["accuracy"], best.checkpoint.path)
    print(results.get_dataframe()[["trial_id", "accuracy", "training_iteration"]])


if __name__ == "__main__":
    main()

# The Ray Tune 2.x original (same train_func, load_split and make_model):
#
#   from ray import train, tune
#   from ray.train.torch import TorchTrainer, prepare_data_loader, prepare_model
#   from ray.tune.search.optuna import OptunaSearch
#   ...
#       trainer = TorchTrainer(train_func, scaling_config=train.ScalingConfig(num_workers=2),
#                              train_loop_config={"epochs": epochs, "batch_size": 128,
#                                                 "train_size": train_size})
#       tuner = tune.Tuner(
#           trainer,
#           param_space={"train_loop_config": {"lr": tune.loguniform(3e-4, 3e-3),
#                                              "hidden": tune.choice([256, 512])}},
#           tune_config=tune.TuneConfig(
#               metric="accuracy", mode="max", num_samples=samples,
#               scheduler=tune.schedulers.ASHAScheduler(max_t=epochs, grace_period=1),
#               search_alg=OptunaSearch(seed=1)),
#           run_config=train.RunConfig(name="mnist", storage_path=os.path.abspath(args.storage_path),
#                                      stop={"training_iteration": epochs},
#                                      checkpoint_config=train.CheckpointConfig(num_to_keep=2),
#                                      failure_config=train.FailureConfig(max_failures=2)))
#       results = tuner.fit()
#       best = results.get_best_result()
#       print(best.config, best.metrics["accuracy"], best.checkpoint.path)
