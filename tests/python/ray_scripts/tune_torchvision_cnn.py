# After Ray's "Get Started with Tune" tutorial
# (doc/source/tune/getting-started.rst, python/ray/tune/examples/mnist_pytorch.py):
# a ConvNet, train/test functions, ASHA over lr and momentum. torchvision's
# FakeData (made locally) stands in for the MNIST download.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

from tunerun import train, tune
from tunerun.tune.schedulers import ASHAScheduler


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 3, kernel_size=3)
        self.fc = nn.Linear(192, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 3))
        x = x.view(-1, 192)
        return F.log_softmax(self.fc(x), dim=1)


def train_func(model, optimizer, train_loader):
    model.train()
    for data, target in train_loader:
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()


def test_func(model, data_loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for data, target in data_loader:
            _, predicted = torch.max(model(data).data, 1)
            total += target.size(0)
            correct += (predicted == target).sum().item()
    return correct / total


def train_mnist(config):
    torch.set_num_threads(1)
    mnist_transforms = transforms.Compose([transforms.ToTensor(),
                                           transforms.Normalize((0.1307,), (0.3081,))])
    data = datasets.FakeData(size=128, image_size=(1, 28, 28), num_classes=10,
                             transform=mnist_transforms, random_offset=0)
    train_loader = DataLoader(data, batch_size=32, shuffle=True)
    test_loader = DataLoader(data, batch_size=64)
    model = ConvNet()
    optimizer = optim.SGD(model.parameters(), lr=config["lr"], momentum=config["momentum"])
    for i in range(3):
        train_func(model, optimizer, train_loader)
        train.report({"mean_accuracy": test_func(model, test_loader)})


search_space = {"lr": tune.sample_from(lambda spec: 10 ** (-10 * __import__("numpy").random.rand())),
                "momentum": tune.uniform(0.1, 0.9)}
tuner = tune.Tuner(
    train_mnist,
    tune_config=tune.TuneConfig(num_samples=2, scheduler=ASHAScheduler(metric="mean_accuracy",
                                                                       mode="max")),
    param_space=search_space,
)
results = tuner.fit()
dfs = {result.path: result.metrics_dataframe for result in results}
assert len(dfs) == 2
assert all(len(df) >= 1 for df in dfs.values())
print(results.get_best_result(metric="mean_accuracy", mode="max").config)
