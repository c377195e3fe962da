"""ray.init / ray.shutdown / ray.is_initialized for scripts written for Ray:
tunerun needs no cluster to connect to, so these do nothing but accept Ray's
arguments (and say so once)."""

import warnings

_initialized = False


def init(address=None, **kwargs):
    """Ray's ray.init(address=None, *, num_cpus=, num_gpus=, ...): a no-op here.
    tunerun runs trials on this machine's CPUs and GPUs (or Slurm's, per the
    spec); warns once that the arguments are ignored."""
    global _initialized
    if not _initialized:
        given = ", ".join([*(["address"] if address is not None else []), *sorted(kwargs)])
        warnings.warn("tunerun.init() does nothing: tunerun needs no Ray cluster"
                      + (f" (ignored: {given})" if given else ""), stacklevel=2)
    _initialized = True


def shutdown():
    """Ray's ray.shutdown(): a no-op here."""
    global _initialized
    _initialized = False


def is_initialized():
    """True after init(), until shutdown(), as Ray's."""
    return _initialized
