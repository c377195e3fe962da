"""DDP training throughput from the Python API: samples/s of a TorchTrainer
trial (tunerun.train.torch.prepare_model: PyTorch's DistributedDataParallel
over Gloo) beside our C++ DDP (benchmarks/ddp_throughput --worker, libtorch)
and plain PyTorch DDP (benchmarks/anchors/torch_ddp_baseline.py, mp.spawn),
all in this run, on the same Fashion-MNIST MLP (784-512-256-10), SGD (lr
0.05, momentum 0.9), 128 samples per rank per step, 1 thread per rank,
timed after the same warm-up steps.

    PYTHONPATH=build/bindings /usr/bin/python3 benchmarks/python_ddp.py [--steps 300] [--repeat 2]

Needs python3-torch, dataset-fashion-mnist and build/benchmarks/ddp_throughput
(cmake --build build --target ddp_throughput). Prints each run's samples/s,
then the best of each side and the ratios of tunerun's Python trial to the
other two.
"""

import argparse
import gzip
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from tunerun import train, tune
from tunerun.train.torch import TorchTrainer, prepare_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = "/usr/share/datasets/fashion-mnist"


def load_train():
    import numpy as np
    import torch
    with gzip.open(os.path.join(DATA, "train-images-idx3-ubyte.gz")) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
    with gzip.open(os.path.join(DATA, "train-labels-idx1-ubyte.gz")) as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    x = (torch.from_numpy(x.astype(np.float32) / 255.0) - 0.2860) / 0.3530
    return x, torch.from_numpy(y.astype(np.int64))


def train_loop(config):
    """The baseline's loop (torch_ddp_baseline.py) as a TorchTrainer trial."""
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(1)
    torch.manual_seed(0)
    context = train.get_context()
    rank, world = context.get_world_rank(), context.get_world_size()
    x, y = load_train()
    model = prepare_model(torch.nn.Sequential(
        torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    generator = torch.Generator().manual_seed(0)
    batch, steps, warmup = config["batch"], config["steps"], config["warmup"]
    done, start = 0, None
    while done < steps:
        perm = torch.randperm(len(x), generator=generator)[rank::world]
        for i in range(0, len(perm) - batch + 1, batch):
            idx = perm[i:i + batch]
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(x[idx]), y[idx]).backward()
            opt.step()
            done += 1
            if done == warmup:
                start = time.perf_counter()
            if done >= steps:
                break
    seconds = time.perf_counter() - start
    train.report({"samples_per_s": (steps - warmup) * batch * world / seconds})


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_json(procs):
    result = None
    for p in procs:
        out, _ = p.communicate()
        for line in out.splitlines():
            if line.startswith("{") and result is None:
                result = json.loads(line)
    return result


def cpp_ddp(world, a):
    binary = os.path.join(ROOT, "build", "benchmarks", "ddp_throughput")
    port = free_port()
    procs = []
    for rank in range(world):
        env = dict(os.environ, OMP_NUM_THREADS="1", RANK=str(rank), WORLD_SIZE=str(world),
                   LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(world),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen(
            [binary, "--worker", "--model", "mlp", "--steps", str(a.steps), "--warmup",
             str(a.warmup), "--batch", str(a.batch)], env=env, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True))
    return first_json(procs)["samples_per_s"]


def pytorch_ddp(world, a):
    script = os.path.join(ROOT, "benchmarks", "anchors", "torch_ddp_baseline.py")
    proc = subprocess.Popen(
        [sys.executable, script, "--model", "mlp", "--workers", str(world), "--threads", "1",
         "--batch", str(a.batch), "--epochs", "1000", "--steps", str(a.steps), "--warmup",
         str(a.warmup), "--port", str(free_port())],
        env=dict(os.environ, OMP_NUM_THREADS="1"), stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True)
    return first_json([proc])["samples_per_s"]


def tunerun_python(world, a, storage):
    trainer = TorchTrainer(train_loop, scaling_config=train.ScalingConfig(num_workers=world),
                           train_loop_config={"batch": a.batch, "steps": a.steps,
                                              "warmup": a.warmup})
    grid = tune.Tuner(trainer, run_config=train.RunConfig(
        name=f"ddp_{world}_{time.monotonic_ns()}", storage_path=storage, verbose=0)).fit()
    if grid.errors:
        raise RuntimeError(f"the TorchTrainer trial failed: {grid.errors}")
    return grid[0].metrics["samples_per_s"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300, help="per rank, warm-up included")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--batch", type=int, default=128, help="per rank")
    parser.add_argument("--repeat", type=int, default=2, help="runs per side; best kept")
    a = parser.parse_args()
    sides = {"tunerun Python (TorchTrainer)": None, "tunerun C++ DDP": cpp_ddp,
             "PyTorch DDP (mp.spawn)": pytorch_ddp}
    best = {}
    with tempfile.TemporaryDirectory() as storage:
        for world in (1, 2):
            for _ in range(a.repeat):  # alternating, so load drifts hit every side
                for name, run in sides.items():
                    rate = tunerun_python(world, a, storage) if run is None else run(world, a)
                    print(f"{name:30s} ranks={world} {rate:10.0f} samples/s", flush=True)
                    best[name, world] = max(best.get((name, world), 0.0), rate)
    print(f"\nbest of {a.repeat}, {a.steps} steps/rank, batch {a.batch}/rank, 1 thread/rank "
          "(2-core machine shared with other engineers)")
    ours = "tunerun Python (TorchTrainer)"
    for world in (1, 2):
        for name in sides:
            ratio = "" if name == ours else f"  Python/this: x{best[ours, world] / best[name, world]:.2f}"
            print(f"{name:30s} ranks={world} {best[name, world]:10.0f} samples/s{ratio}")


if __name__ == "__main__":
    main()
