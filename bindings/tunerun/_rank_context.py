"""What a rank process holds of the trial it runs, beyond what the C++ worker
runtime answers (_tunerun.get_context(): ranks, world size, trial id...).
tunerun._worker sets it before each run of the trainable; the session calls,
get_dataset_shard and the TorchTrainer helpers read it. A leaf: it imports
nothing, so any module of the package may use it."""

_initial_checkpoint = None  # TorchTrainer(resume_from_checkpoint=)'s directory
_bundles = None  # the trial's resources, one bundle per rank ({"CPU": 2, "GPU": 1})
_torch_config = None  # TorchTrainer's torch_config ({"backend": ..., "timeout_s": ...})
_datasets = None  # TorchTrainer(datasets=)'s rows, {name: every row}
_unsplit = ()  # the names of those that every rank reads whole (DataConfig)


def start_trial(initial_checkpoint=None, bundles=None, torch_config=None):
    """A new trial in this process: nothing of the previous one stays."""
    global _initial_checkpoint, _bundles, _torch_config, _datasets
    _initial_checkpoint, _bundles, _torch_config = initial_checkpoint, bundles, torch_config
    _datasets = None


def set_datasets(datasets, unsplit=()):
    global _datasets, _unsplit
    _datasets, _unsplit = datasets, tuple(unsplit)


def initial_checkpoint():
    """The checkpoint directory a fresh start resumes from, or None."""
    return _initial_checkpoint


def bundles():
    return _bundles


def torch_config():
    return _torch_config


def datasets():
    """{name: every row}, or None when the trainer was given no datasets."""
    return _datasets


def unsplit_datasets():
    return _unsplit
