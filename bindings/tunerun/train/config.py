"""train.RunConfig and its parts, and ScalingConfig, as Ray's."""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class CheckpointConfig:
    num_to_keep: Optional[int] = None  # None: keep all
    checkpoint_score_attribute: Optional[str] = None  # None: keep the most recent
    checkpoint_score_order: str = "max"
    # Class trainables only (tune.Trainable), as Ray: checkpoint every N
    # iterations (0: never) and at the end (None: yes).
    checkpoint_frequency: int = 0
    checkpoint_at_end: Optional[bool] = None


@dataclass
class FailureConfig:
    max_failures: int = 0  # restarts of a failed trial from its checkpoint; -1: unlimited
    fail_fast: bool = False


@dataclass
class ClusterConfig:
    """Where the ranks run (tunerun's own; Ray connects to a cluster with
    ray.init instead). None takes tunerun.init()'s value, else the default:
    launcher "auto" runs ranks as Slurm job steps inside an allocation
    (SLURM_JOB_ID set) and on this machine elsewhere; Slurm's nodes need a
    control_address or control_interface they reach the driver at, and so
    do launcher "ssh"'s hosts (never loopback). The sweep file's [cluster]
    keys of the same names (docs/clusters.md)."""
    launcher: Optional[str] = None  # "auto", "local", "slurm", "sim" or "ssh"
    control_address: Optional[str] = None  # an IPv4 address of this machine
    control_interface: Optional[str] = None  # or the interface whose address that is
    slurm_poll_s: Optional[float] = None  # seconds between reads of Slurm's node states
    # Launcher "ssh": the hostfile (HOST [slots=N] [cpus=N] [gpus=N] a line)
    # and an ssh_config for every ssh (ssh -F); a relative path is relative
    # to the working directory when the Tuner is made (a trainer's: at fit()).
    hostfile: Optional[Any] = None
    ssh_config: Optional[Any] = None
    ssh_retry_s: Optional[float] = None  # seconds between tries to reach a lost host
    ssh_retire_after: Optional[int] = None  # the loss that retires a host (0: never)
    # Launcher "slurm": how long trials may wait while no node can hold their
    # group, and how long before the allocation's time limit, every trial
    # pauses at a checkpoint and fit() returns early (Tuner.restore goes on).
    node_wait_s: Optional[float] = None
    end_margin_s: Optional[float] = None


@dataclass
class RunConfig:
    name: Optional[str] = None
    storage_path: Any = "runs"  # Ray: ~/ray_results
    # {metric: bound} (stop once result >= bound), a tune.Stopper, or a
    # function (trial_id, result) -> bool
    stop: Any = None
    callbacks: Optional[List[Any]] = None  # tune.Callback objects
    checkpoint_config: CheckpointConfig = field(default_factory=CheckpointConfig)
    failure_config: FailureConfig = field(default_factory=FailureConfig)
    verbose: int = 1  # 0 silent, 1 trial starts/ends, 2 every result (Ray's levels differ)
    progress_reporter: Any = None  # tune.CLIReporter: a trial table while fit() runs
    local_dir: Any = None  # Ray 2.0-2.6's name of storage_path
    # Where the ranks run: a ClusterConfig or a dict of its fields.
    cluster: Any = field(default_factory=ClusterConfig)

    def __post_init__(self):
        if isinstance(self.cluster, dict):
            self.cluster = ClusterConfig(**self.cluster)
        elif self.cluster is None:
            self.cluster = ClusterConfig()
        elif not isinstance(self.cluster, ClusterConfig):
            raise ValueError(f"RunConfig.cluster: expected a ClusterConfig or a dict, got "
                             f"{self.cluster!r}")
        if self.local_dir is not None:
            if self.storage_path != "runs":
                raise ValueError("RunConfig: give storage_path or local_dir (its Ray 2.0-2.6 "
                                 "name), not both")
            self.storage_path, self.local_dir = self.local_dir, None


@dataclass
class ScalingConfig:
    num_workers: Any = 1  # ranks, or (min, max): an elastic group, resized at checkpoints
    use_gpu: bool = False
    resources_per_worker: Optional[Dict[str, float]] = None  # {"CPU": 1, "GPU": 1}
    # Ray's: the trainer actor's own resources. A trainer's own trials
    # reserve nothing for it (a trial is its ranks alone); tune.with_resources
    # of a ScalingConfig adds it as the first bundle (as_placement_group_factory).
    trainer_resources: Optional[Dict[str, float]] = None
    placement_strategy: str = "PACK"  # or SPREAD, STRICT_PACK, STRICT_SPREAD: ranks over nodes

    @property
    def _resources_per_worker_not_none(self):
        """One rank's resources as TorchTrainer holds them: resources_per_worker's
        nonzero ones, 1 CPU unless it says otherwise (Ray asks none with
        use_gpu; a rank here is a process that holds a core), 1 GPU with use_gpu."""
        out = {k.upper(): v for k, v in (self.resources_per_worker or {}).items()}
        out.setdefault("CPU", 1)
        if self.use_gpu:
            out.setdefault("GPU", 1)
        return {k: v for k, v in out.items() if v != 0}

    @property
    def _trainer_resources_not_none(self):
        # Ray Train 2.x (V2) reserves nothing for the trainer unless told.
        return {k: v for k, v in (self.trainer_resources or {}).items() if v != 0}

    @property
    def num_cpus_per_worker(self):
        return self._resources_per_worker_not_none.get("CPU", 0)

    @property
    def num_gpus_per_worker(self):
        return self._resources_per_worker_not_none.get("GPU", 0)

    @property
    def additional_resources_per_worker(self):
        return {k: v for k, v in self._resources_per_worker_not_none.items()
                if k not in ("CPU", "GPU")}

    @property
    def total_resources(self):
        """The trainer's resources plus every worker's, as Ray's."""
        total = dict(self._trainer_resources_not_none)
        workers = self.num_workers[-1] if isinstance(self.num_workers, (tuple, list)) \
            else self.num_workers
        for key, value in self._resources_per_worker_not_none.items():
            total[key] = total.get(key, 0) + value * (workers or 0)
        return total

    def as_placement_group_factory(self):
        """Ray's: a PlacementGroupFactory whose first bundle is the trainer's
        (empty unless trainer_resources says) and one bundle per worker.
        tune.with_resources(fn, ScalingConfig(...)) reserves it for each
        trial, so a TorchTrainer the function fits runs inside it."""
        from tunerun.tune.placement_groups import PlacementGroupFactory
        workers = self.num_workers[-1] if isinstance(self.num_workers, (tuple, list)) \
            else self.num_workers
        return PlacementGroupFactory(
            [self._trainer_resources_not_none] + [self._resources_per_worker_not_none] *
            (workers or 0), strategy=self.placement_strategy)
