"""ray.init / ray.shutdown / ray.is_initialized for scripts written for Ray.
tunerun needs no cluster to connect to; init() takes instead where the ranks
run (launcher, control_address, control_interface, slurm_poll_s, hostfile,
ssh_config, ssh_retry_s, ssh_retire_after, node_wait_s, end_margin_s: the
fields of train.ClusterConfig),
which every RunConfig then defaults to. Ray's own arguments are accepted and,
where they have no meaning here, said to be ignored once."""

import dataclasses
import os
import sys
import warnings

from tunerun.train.config import ClusterConfig

_initialized = False
_cluster = ClusterConfig()  # what init() set; RunConfig.cluster's fields default to it
_resources = {}  # init(num_cpus=, num_gpus=): {"cpus": n, "gpus": n}, what trials may hold
_CLUSTER_FIELDS = tuple(f.name for f in dataclasses.fields(ClusterConfig))


def init(address=None, **kwargs):
    """Ray's ray.init(address=None, *, num_cpus=, num_gpus=, ...): num_cpus
    and num_gpus bound what the trials of every later fit() hold at once, as
    Ray's. Plus where the ranks run: init(launcher="slurm", control_interface="ib0") makes
    every later RunConfig without its own cluster settings use them. Warns
    once about the arguments it ignores."""
    global _initialized, _cluster
    cluster = {k: kwargs.pop(k) for k in _CLUSTER_FIELDS if k in kwargs}
    _cluster = dataclasses.replace(_cluster, **cluster)
    for name in ("num_cpus", "num_gpus"):
        value = kwargs.pop(name, None)
        if value is not None:
            _resources[name[4:]] = value
    if not _initialized:
        given = ", ".join([*(["address"] if address is not None else []), *sorted(kwargs)])
        if given:
            warnings.warn(f"tunerun.init(): tunerun needs no Ray cluster (ignored: {given})",
                          stacklevel=2)
    _initialized = True


def shutdown():
    """Ray's ray.shutdown(): forgets init()'s cluster settings and ends
    ray.remote's pool processes."""
    global _initialized, _cluster
    remote = sys.modules.get("tunerun._remote")
    if remote is not None:
        remote.shutdown_pool()
    _initialized = False
    _cluster = ClusterConfig()
    _resources.clear()


def is_initialized():
    """True after init(), until shutdown(), as Ray's."""
    return _initialized


def cluster_resources():
    """Ray's ray.cluster_resources(): {"CPU": n, "GPU": n, "memory": bytes}
    of this machine, or init()'s num_cpus/num_gpus where given. GPUs counted
    from CUDA_VISIBLE_DEVICES, else torch when the script imported it."""
    import os
    cpus = _resources.get("cpus") or len(os.sched_getaffinity(0))
    gpus = _resources.get("gpus")
    if gpus is None:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        torch = sys.modules.get("torch")
        if visible is not None:
            gpus = len([d for d in visible.split(",") if d.strip()])
        elif torch is not None:
            gpus = torch.cuda.device_count()
        else:
            gpus = 0
    out = {"CPU": float(cpus)}
    if gpus:
        out["GPU"] = float(gpus)
    out["memory"] = float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    return out


def available_resources():
    """Ray's ray.available_resources(): between fit() calls nothing holds
    resources in the driver, so cluster_resources() (during a fit, from a
    trial, the same: tunerun does not count what the trials hold here)."""
    return cluster_resources()


def resources():
    """init()'s num_cpus and num_gpus as the spec's resources section
    ({"cpus": 4, "gpus": 1}): the most the trials hold at once."""
    return dict(_resources)


def cluster_settings(cluster):
    """`cluster` (a RunConfig's ClusterConfig, a dict of its fields, or None)
    with the fields it leaves None taken from init()."""
    if cluster is None:
        cluster = ClusterConfig()
    elif isinstance(cluster, dict):
        cluster = ClusterConfig(**cluster)
    settings = {name: getattr(cluster, name) if getattr(cluster, name) is not None
                else getattr(_cluster, name) for name in _CLUSTER_FIELDS}
    # The ssh launcher's files, relative to the working directory now (a
    # restored run may start elsewhere); another type is the engine's to refuse.
    for name in ("hostfile", "ssh_config"):
        path = settings[name]
        if isinstance(path, (str, os.PathLike)) and os.fspath(path):
            settings[name] = os.path.abspath(os.path.expanduser(os.fspath(path)))
    return ClusterConfig(**settings)
