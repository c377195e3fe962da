"""Torch trainables of the Python tests (a module of its own, so the other
tests' workers never import torch)."""

import json
import os

import torch
from torch.utils.data import DataLoader, TensorDataset

from tunerun import train
from tunerun.train.torch import prepare_data_loader, prepare_model


def ddp_gradients(config):
    """One backward pass of a fixed MLP over 16 fixed samples, split over the
    ranks by DistributedSampler; each rank saves the gradients it ends with."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    model = prepare_model(model)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(16, 4, generator=gen)
    y = torch.randn(16, 1, generator=gen)
    loader = prepare_data_loader(DataLoader(TensorDataset(x, y),
                                            batch_size=config["batch_size"]))
    xb, yb = next(iter(loader))
    torch.nn.functional.mse_loss(model(xb), yb).backward()
    grads = torch.cat([p.grad.flatten() for p in model.parameters()]).tolist()
    context = train.get_context()
    path = os.path.join(context.get_trial_dir(), f"grads_{context.get_world_rank()}.json")
    with open(path, "w") as f:
        json.dump(grads, f)
    train.report({"world_size": context.get_world_size(), "samples": len(xb),
                  "node_rank": context.get_node_rank()})
