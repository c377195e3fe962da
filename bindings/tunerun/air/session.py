"""ray.air.session (Ray 2.0-2.6): the session calls as module functions,
over tunerun.train's report, get_checkpoint and get_context."""

from tunerun.train.session import get_checkpoint, report  # noqa: F401
from tunerun.train.session import get_context as _context


def get_trial_id():
    return _context().get_trial_id()


def get_trial_name():
    return _context().get_trial_name()


def get_trial_dir():
    return _context().get_trial_dir()


def get_experiment_name():
    return _context().get_experiment_name()


def get_trial_resources():
    return _context().get_trial_resources()


def get_world_rank():
    return _context().get_world_rank()


def get_world_size():
    return _context().get_world_size()


def get_local_rank():
    return _context().get_local_rank()


def get_local_world_size():
    return _context().get_local_world_size()


def get_node_rank():
    return _context().get_node_rank()
