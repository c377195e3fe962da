"""Ray Train's TorchTrainer over tunerun: data-parallel PyTorch (Debian's
python3-torch) in a trial's ranks.

Each rank is a worker process with torchrun's environment (RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR, MASTER_PORT; the controller picks the port per
group). prepare_model() initialises the process group from it on first use
(Gloo on CPU, NCCL when the rank has a GPU) and wraps the model in
DistributedDataParallel; the worker tears the group down when the trial
ends, so a reused rank joins the next trial's group.

    trainer = TorchTrainer(train_func, train_loop_config={"lr": 0.1},
                           scaling_config=ScalingConfig(num_workers=2))
    result = trainer.fit()                           # one job, or as a Tuner's trainable:
    tune.Tuner(trainer, param_space={"train_loop_config": {"lr": tune.loguniform(1e-3, 1)}})

train_func(config) gets train_loop_config with the trial's sampled
train_loop_config keys laid over it.
"""

import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, RandomSampler
from torch.utils.data.distributed import DistributedSampler

from tunerun import _rank_context, _reference
from tunerun.train import dataset_shard
from tunerun.train.base_trainer import raise_if_failed
from tunerun.train._device import DeviceLoader, get_device
from tunerun.train.config import RunConfig, ScalingConfig
from tunerun.train.torch_checkpoint import TorchCheckpoint  # noqa: F401
from tunerun.tune import _nesting
from tunerun.tune.tuner import Tuner, _display_name, _expand, _TrainableSpec


def _ensure_process_group():
    if dist.is_initialized():
        return
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if "MASTER_PORT" not in os.environ:
        raise RuntimeError("prepare_model()/prepare_data_loader() run only inside a trial's rank")
    config = _rank_context.torch_config() or {}
    backend = config.get("backend") or ("nccl" if get_device().type == "cuda" else "gloo")
    dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world_size,
                            timeout=timedelta(seconds=config.get("timeout_s", 1800)))


def prepare_model(model, move_to_device=True):
    """The model on the rank's device, wrapped in DistributedDataParallel when
    the trial has more than one rank (a 1-rank trial gets the model itself)."""
    device = get_device()
    if move_to_device:
        model = model.to(device)
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return model
    _ensure_process_group()
    ids = [device.index] if device.type == "cuda" else None
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)


def prepare_data_loader(loader, add_dist_sampler=True, move_to_device=True):
    """`loader` with a DistributedSampler (each rank its share of the data; it
    keeps the loader's shuffling) and batches moved to the rank's device.
    Call sampler.set_epoch(epoch) each epoch when shuffling, as in PyTorch."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if add_dist_sampler and world_size > 1:
        _ensure_process_group()
        shuffle = isinstance(loader.sampler, RandomSampler)
        sampler = DistributedSampler(loader.dataset, num_replicas=world_size,
                                     rank=int(os.environ.get("RANK", "0")), shuffle=shuffle)
        loader = DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=sampler,
                            num_workers=loader.num_workers, collate_fn=loader.collate_fn,
                            pin_memory=loader.pin_memory, drop_last=loader.drop_last)
    if move_to_device:
        return DeviceLoader(loader, get_device())
    return loader


def get_devices():
    """The rank's devices, as a list (one here: the rank's GPU or the CPU)."""
    return [get_device()]


def enable_reproducibility(seed=0):
    """Ray's: seeds torch, random and numpy with `seed`, and asks torch for
    deterministic algorithms (cuDNN's benchmark off), in this rank."""
    import random
    import numpy as np
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def backward(tensor):
    """Ray's train.torch.backward (for its AMP helpers): tensor.backward()."""
    tensor.backward()


class TorchConfig:
    """Ray's TorchConfig: the process group's backend ("gloo", "nccl"; None:
    NCCL on GPUs, else Gloo) and its timeout. init_method "env" only (the
    controller gives each group its address and port)."""

    def __init__(self, backend=None, init_method="env", timeout_s=1800):
        if backend not in (None, "gloo", "nccl"):
            raise ValueError(f"TorchConfig: backend {backend!r} is not 'gloo' or 'nccl'")
        if init_method != "env":
            raise ValueError("TorchConfig: init_method 'env' only (the controller sets "
                             "MASTER_ADDR and MASTER_PORT per group)")
        self.backend = backend
        self.init_method = init_method
        self.timeout_s = timeout_s


class TorchTrainer:
    def __init__(self, train_loop_per_worker, *, train_loop_config=None, torch_config=None,
                 scaling_config=None, run_config=None, datasets=None, dataset_config=None,
                 resume_from_checkpoint=None, metadata=None):
        """resume_from_checkpoint (a train.Checkpoint): what train.get_checkpoint()
        returns on a fresh start, as Ray's (a restart after a failure gets the
        trial's own latest). datasets: {name: tunerun.data.Dataset or
        iterable of rows}, each rank's share read with
        train.get_dataset_shard(name) (tunerun/train/dataset_shard.py; the
        rows are pickled once); dataset_config (a train.DataConfig) names
        those that every rank reads whole. metadata is accepted and unused."""
        if not callable(train_loop_per_worker):
            raise ValueError(f"TorchTrainer: train_loop_per_worker must be a function, got "
                             f"{train_loop_per_worker!r}")
        self.resume_from_checkpoint = resume_from_checkpoint
        self.train_loop_per_worker = train_loop_per_worker
        self.train_loop_config = dict(train_loop_config or {})
        self.torch_config = torch_config or TorchConfig()
        self.scaling_config = scaling_config or ScalingConfig()
        self.run_config = run_config or RunConfig()
        self._payload = None
        self.datasets = datasets
        self.dataset_config = dataset_config
        if datasets is not None:
            rows = dataset_shard.materialise(datasets)
            unsplit = [n for n in rows if dataset_config is not None
                       and not dataset_config.splits(n)]
            self._payload = _reference.dumps({"datasets": rows, "unsplit": unsplit},
                                             "TorchTrainer: datasets")

    def _tunerun_trainer(self):
        s = self.scaling_config
        res = {k.upper(): v for k, v in (s.resources_per_worker or {}).items()}
        gpus = int(res.get("GPU", 1 if s.use_gpu else 0))
        workers = list(s.num_workers) if isinstance(s.num_workers, (tuple, list)) else s.num_workers
        counts = workers if isinstance(workers, list) else [workers]
        if not all(isinstance(w, int) and not isinstance(w, bool) for w in counts):
            raise ValueError(f"ScalingConfig(num_workers={s.num_workers!r}): expected a number of "
                             "workers, or (min, max) for an elastic group")
        spec = {"num_workers": workers, "cpus_per_worker": res.get("CPU", 1),
                "gpus_per_worker": gpus, "placement_strategy": s.placement_strategy}
        space = {"train_loop_config": self.train_loop_config} if self.train_loop_config else {}
        ref = _reference.make_reference("trainer")
        if self.resume_from_checkpoint is not None:
            ref["resume_from_checkpoint"] = os.path.abspath(self.resume_from_checkpoint.path)
        ref["torch_config"] = {"backend": self.torch_config.backend,
                               "timeout_s": self.torch_config.timeout_s}
        return _TrainableSpec(ref=ref, spec=spec, space=space,
                              display=_display_name(self.train_loop_per_worker),
                              payloads=[self._payload] if self._payload else [],
                              runs=self.train_loop_per_worker)

    def fit(self):
        """Runs one training job (a one-trial experiment); returns its Result.
        Raises train.base_trainer.TrainingFailedError, with the failing rank's
        error and traceback, when the training failed, as Ray's. The trainer
        is kept in the experiment (trainer.pkl) for TorchTrainer.restore.
        Inside a Tune trial, a RunConfig(name=) whose run exists (the trial's
        earlier attempt ran it) is continued from its latest checkpoint, as
        Ray Train's fault tolerance under Tune does."""
        restore_path = self._restore_path or self._run_in_trial_to_continue()
        if restore_path is not None:
            tuner = Tuner.restore(restore_path, self, resume_errored=True,
                                  run_config=self.run_config)
        else:
            tuner = Tuner(self, run_config=self.run_config)
            directory = os.path.abspath(os.path.join(tuner._spec["storage_path"], tuner._name))
            os.makedirs(directory, exist_ok=True)
            self._save(directory)
        grid = tuner.fit()
        return raise_if_failed(grid[0], grid.experiment_path)

    def _run_in_trial_to_continue(self):
        name = self.run_config.name
        if not name or not _nesting.in_trial():
            return None
        path = os.path.abspath(os.path.join(_expand(self.run_config.storage_path), name))
        return path if self.can_restore(path) else None

    _restore_path = None
    _ARGUMENTS = ("train_loop_per_worker", "train_loop_config", "torch_config", "scaling_config",
                  "run_config", "datasets", "dataset_config", "resume_from_checkpoint")

    def _save(self, experiment_path):
        import cloudpickle
        try:
            data = cloudpickle.dumps({name: getattr(self, name) for name in self._ARGUMENTS})
        except Exception as error:  # restore() then says the trainer must be given again
            data = cloudpickle.dumps({"unpicklable": f"{type(error).__name__}: {error}"})
        with open(os.path.join(experiment_path, "trainer.pkl"), "wb") as f:
            f.write(data)

    @classmethod
    def can_restore(cls, path):
        """Whether `path` holds a TorchTrainer.fit() to continue."""
        path = os.path.expanduser(os.fspath(path))
        return (os.path.isfile(os.path.join(path, "experiment.db"))
                and os.path.isfile(os.path.join(path, "trainer.pkl")))

    @classmethod
    def restore(cls, path, train_loop_per_worker=None, train_loop_config=None, **kwargs):
        """A trainer whose fit() continues the run in `path` from its latest
        checkpoints, as Ray's: the original trainer's arguments, those given
        here (datasets=, scaling_config=...) laid over them."""
        import cloudpickle
        path = os.path.abspath(os.path.expanduser(os.fspath(path)))
        if not cls.can_restore(path):
            raise ValueError(f"TorchTrainer.restore: {path} holds no TorchTrainer run "
                             "(no experiment.db and trainer.pkl)")
        with open(os.path.join(path, "trainer.pkl"), "rb") as f:
            saved = cloudpickle.load(f)
        if "unpicklable" in saved and train_loop_per_worker is None:
            raise ValueError(f"TorchTrainer.restore: the trainer was not kept "
                             f"({saved['unpicklable']}); give train_loop_per_worker again")
        saved.pop("unpicklable", None)
        given = {"train_loop_per_worker": train_loop_per_worker,
                 "train_loop_config": train_loop_config, **kwargs}
        saved.update({k: v for k, v in given.items() if v is not None})
        run_config = saved.pop("run_config", None) or RunConfig()
        trainer = cls(saved.pop("train_loop_per_worker"), run_config=run_config, **saved)
        trainer._restore_path = path
        return trainer
