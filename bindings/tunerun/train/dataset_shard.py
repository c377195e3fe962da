"""TorchTrainer(datasets={name: dataset}) and train.get_dataset_shard(name):
each rank gets every world_size-th row of each dataset, starting at its
rank (so shards differ in length by at most one row), as Ray Train's
DataIterator shards a Ray Dataset; a dataset that the trainer's
DataConfig does not split reaches every rank whole. The rows are
materialised and pickled once on the driver, beside the experiment, and
read by each rank.

A dataset is a tunerun.data.Dataset (ray.data's calls, in memory) or any
iterable of rows (a list of dicts, a torch Dataset, a generator)."""

from tunerun import _rank_context
from tunerun.data.dataset import DataIterator
from tunerun.train.session import get_context

DatasetShard = DataIterator


def materialise(datasets):
    """{name: list of rows} from TorchTrainer's datasets argument."""
    from tunerun.data.dataset import Dataset
    if not isinstance(datasets, dict):
        raise ValueError(f"TorchTrainer: datasets must be a dict {{name: dataset}}, "
                         f"got {type(datasets).__name__}")
    out = {}
    for name, rows in datasets.items():
        if isinstance(rows, Dataset):
            out[str(name)] = rows.take_all()
            continue
        try:
            out[str(name)] = list(rows)
        except TypeError:
            raise ValueError(f"TorchTrainer: datasets[{name!r}] is not iterable "
                             f"({type(rows).__name__})") from None
    return out


def get_dataset_shard(name):
    """This rank's shard of the trainer's datasets[name], a DataIterator."""
    datasets = _rank_context.datasets()
    if datasets is None:
        raise RuntimeError("get_dataset_shard() runs inside a trainer's train function "
                           "whose trainer was given datasets=")
    if name not in datasets:
        raise KeyError(f"get_dataset_shard: no dataset {name!r}; the trainer has "
                       f"{sorted(datasets)}")
    if name in _rank_context.unsplit_datasets():
        return DataIterator(datasets[name])
    context = get_context()
    return DataIterator(datasets[name][context.get_world_rank()::context.get_world_size()])
