# After Ray Train's "Get Started with PyTorch" guide
# (doc/source/train/doc_code/getting_started_pytorch.py: a torchvision
# ResNet18 with a one-channel first layer, torchvision transforms,
# prepare_model / prepare_data_loader, a checkpoint per epoch) run from a
# Tune trial as Ray Train's "Hyperparameter Tuning with Ray Tune" guide
# shows (train_tune_interop.py's train_driver_fn). torchvision's FakeData
# (made locally, 28x28 grey images) stands in for the FashionMNIST download.
import os
import tempfile

import torch
import torchvision
from torch.nn import CrossEntropyLoss
from torch.optim import Adam
from torchvision.transforms import Compose, Normalize, ToTensor

import tunerun as ray
import tunerun.train
import tunerun.train.torch
import tunerun.tune


def train_func(config):
    model = torchvision.models.resnet18(num_classes=10)
    model.conv1 = torch.nn.Conv2d(1, 64, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3),
                                  bias=False)
    model = ray.train.torch.prepare_model(model)
    criterion = CrossEntropyLoss()
    optimizer = Adam(model.parameters(), lr=config["lr"])
    transform = Compose([ToTensor(), Normalize((0.28604,), (0.32025,))])
    train_data = torchvision.datasets.FakeData(size=16, image_size=(1, 28, 28), num_classes=10,
                                               transform=transform, random_offset=0)
    train_loader = torch.utils.data.DataLoader(train_data, batch_size=8, shuffle=True)
    train_loader = ray.train.torch.prepare_data_loader(train_loader)
    for epoch in range(2):
        if ray.train.get_context().get_world_size() > 1:
            train_loader.sampler.set_epoch(epoch)
        for images, labels in train_loader:
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        metrics = {"loss": loss.item(), "epoch": epoch}
        with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
            torch.save(model.state_dict(), os.path.join(temp_checkpoint_dir, "model.pt"))
            ray.train.report(metrics,
                             checkpoint=ray.train.Checkpoint.from_directory(temp_checkpoint_dir))
        if ray.train.get_context().get_world_rank() == 0:
            print(metrics)


def train_driver_fn(config):
    trainer = ray.train.torch.TorchTrainer(
        train_func, train_loop_config={"lr": config["lr"]},
        scaling_config=ray.train.ScalingConfig(num_workers=2),
        run_config=ray.train.RunConfig(
            name=f"train-trial_id={ray.tune.get_context().get_trial_id()}"))
    result = trainer.fit()
    # The nested run's own Result: its metrics and checkpoint.
    state = torch.load(os.path.join(result.checkpoint.path, "model.pt"))
    ray.tune.report({"loss": result.metrics["loss"], "epochs": result.metrics["epoch"] + 1,
                     "conv1_channels": state["module.conv1.weight"].shape[1]})


results = ray.tune.Tuner(
    ray.tune.with_resources(train_driver_fn,
                            ray.tune.PlacementGroupFactory([{"CPU": 1}, {"CPU": 1}])),
    param_space={"lr": ray.tune.grid_search([1e-3, 1e-2])},
    tune_config=ray.tune.TuneConfig(metric="loss", mode="min"),
).fit()
assert not results.errors, results.errors
for result in results:
    assert result.metrics["epochs"] == 2 and result.metrics["conv1_channels"] == 1
print(results.get_best_result().config)
