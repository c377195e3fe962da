# After Ray Train's "Get Started with PyTorch" guide
# (doc/source/train/getting-started-pytorch.rst and
# doc/source/train/doc_code/getting_started_pytorch.py): a model and a
# DataLoader prepared for 2 workers, a checkpoint from rank 0, the result's
# checkpoint loaded back. Synthetic data in place of the guide's MNIST download.
import os
import tempfile

import torch
from torch.utils.data import DataLoader, TensorDataset

import tunerun as ray
import tunerun.train
import tunerun.train.torch
from tunerun.train import Checkpoint, ScalingConfig
from tunerun.train.torch import TorchTrainer


def train_func():
    torch.manual_seed(0)
    x = torch.randn(256, 8)
    y = (x.sum(dim=1) > 0).long()
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    model = ray.train.torch.prepare_model(model)
    loader = ray.train.torch.prepare_data_loader(
        DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True))
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(3):
        if ray.train.get_context().get_world_size() > 1:
            loader.sampler.set_epoch(epoch)
        for images, labels in loader:
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        metrics = {"loss": loss.item(), "epoch": epoch}
        with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
            checkpoint = None
            if ray.train.get_context().get_world_rank() == 0:
                torch.save(model.state_dict(), os.path.join(temp_checkpoint_dir, "model.pt"))
                checkpoint = Checkpoint.from_directory(temp_checkpoint_dir)
            ray.train.report(metrics, checkpoint=checkpoint)


trainer = TorchTrainer(train_func, scaling_config=ScalingConfig(num_workers=2, use_gpu=False))
result = trainer.fit()
print(result.metrics)
assert result.metrics["epoch"] == 2
with result.checkpoint.as_directory() as checkpoint_dir:
    state = torch.load(os.path.join(checkpoint_dir, "model.pt"))
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    model.load_state_dict({k.replace("module.", ""): v for k, v in state.items()})
