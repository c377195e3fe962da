#!/usr/bin/python3
"""PyTorch DDP from Python on Fashion-MNIST: the baseline that a C++ DDP trial is compared with.

Needs Debian's python3-torch (TUNERUN_BENCH_ANCHORS=1 scripts/install_deps.sh),
dataset-fashion-mnist and libopenblas0-pthread (Debian's default reference BLAS
is ~20x slower). Uses Debian's /usr/bin/python3. Run by benchmarks/ddp_throughput.

  torch_ddp_baseline.py --model mlp|cnn --workers 2 --threads 1 --batch 128 --epochs 1 [--steps N]

Each rank trains on its shard (DistributedSampler), gradients averaged by DDP
over Gloo on loopback. Prints one JSON line: samples/s over the timed steps
(after warm-up), seconds per epoch, and test accuracy after training.
"""
import argparse, gzip, json, os, struct, sys, time

try:
    import numpy as np
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:
    sys.exit(f"torch_ddp_baseline.py: {e}: install python3-torch "
             "(TUNERUN_BENCH_ANCHORS=1 scripts/install_deps.sh)")

DATA = "/usr/share/datasets/fashion-mnist"


def load(kind):
    prefix = "train" if kind == "train" else "t10k"
    with gzip.open(f"{DATA}/{prefix}-images-idx3-ubyte.gz") as f:
        _, n, rows, cols = struct.unpack(">IIII", f.read(16))
        x = np.frombuffer(f.read(), dtype=np.uint8).reshape(n, 1, rows, cols)
    with gzip.open(f"{DATA}/{prefix}-labels-idx1-ubyte.gz") as f:
        f.read(8)
        y = np.frombuffer(f.read(), dtype=np.uint8)
    x = torch.from_numpy(x.astype(np.float32) / 255.0)
    x = (x - 0.2860) / 0.3530
    return x, torch.from_numpy(y.astype(np.int64))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(784, 512), nn.Linear(512, 256), nn.Linear(256, 10)

    def forward(self, x):
        x = x.flatten(1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class CNN(nn.Module):  # LeNet-style
    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(1, 6, 5, padding=2), nn.Conv2d(6, 16, 5)
        self.f1, self.f2, self.f3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        return self.f3(F.relu(self.f2(F.relu(self.f1(x.flatten(1))))))


def run(rank, a):
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    if a.workers > 1:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(a.port))
        dist.init_process_group("gloo", rank=rank, world_size=a.workers)
    x, y = load("train")
    model = MLP() if a.model == "mlp" else CNN()
    if a.workers > 1:
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    g = torch.Generator().manual_seed(0)
    steps_done, timed, t_start = 0, 0, None
    t_epoch0 = time.perf_counter()
    for epoch in range(a.epochs):
        perm = torch.randperm(len(x), generator=g)[rank::a.workers]
        for i in range(0, len(perm) - a.batch + 1, a.batch):
            idx = perm[i:i + a.batch]
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            steps_done += 1
            if steps_done == a.warmup:
                t_start = time.perf_counter()
            elif steps_done > a.warmup:
                timed += 1
            if a.steps and steps_done >= a.steps:
                break
        if a.steps and steps_done >= a.steps:
            break
    t_end = time.perf_counter()
    if rank == 0:
        xt, yt = load("test")
        with torch.no_grad():
            net = model.module if a.workers > 1 else model
            acc = (net(xt).argmax(1) == yt).float().mean().item()
        print(json.dumps({"bench": "torch_ddp", "torch": torch.__version__, "model": a.model,
                          "workers": a.workers, "threads": a.threads, "batch_per_rank": a.batch,
                          "steps_per_rank": steps_done,
                          "samples_per_s": timed * a.batch * a.workers / (t_end - t_start) if timed else None,
                          "train_seconds": t_end - t_epoch0, "test_accuracy": acc}), flush=True)
    if a.workers > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="mlp", choices=["mlp", "cnn"])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--steps", type=int, default=0)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--port", type=int, default=29511)
    a = p.parse_args()
    if a.workers > 1:
        mp.spawn(run, args=(a,), nprocs=a.workers, join=True)
    else:
        run(0, a)
