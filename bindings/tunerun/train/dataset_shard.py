"""TorchTrainer(datasets={name: iterable}) and train.get_dataset_shard(name):
each rank gets every world_size-th row of each dataset, starting at its
rank (so shards differ in length by at most one row), as Ray Train's
DataIterator shards a Ray Dataset. The rows are materialised and pickled
once on the driver, beside the experiment, and read by each rank.

Ray's datasets are Ray Data Datasets; ours are any iterable of rows (a
list of dicts, a torch Dataset, a generator): there is no Ray Data here.
torch, numpy and pandas are imported by the calls that need them."""

from tunerun import _rank_context
from tunerun.train._device import get_device
from tunerun.train.session import get_context


class DatasetShard:
    """One rank's rows of one dataset, with Ray's DataIterator reading calls."""

    def __init__(self, rows):
        self._rows = rows

    def __iter__(self):
        return iter(self._rows)

    def __len__(self):
        return len(self._rows)

    def count(self):
        return len(self._rows)

    def iter_rows(self):
        return iter(self._rows)

    def iter_batches(self, *, batch_size=256, drop_last=False, batch_format="default"):
        """Batches of batch_size rows (the last may be shorter unless
        drop_last): rows that are dicts become a dict of numpy columns, as
        Ray's "numpy" format; other rows a numpy array. batch_format
        "pandas" gives a DataFrame."""
        if batch_format not in ("default", "numpy", "pandas"):
            raise ValueError(f"iter_batches: batch_format {batch_format!r} is not one of "
                             "'default', 'numpy', 'pandas'")
        if batch_size is None:
            batch_size = max(len(self._rows), 1)
        for start in range(0, len(self._rows), batch_size):
            rows = self._rows[start:start + batch_size]
            if drop_last and len(rows) < batch_size:
                return
            yield _batch(rows, batch_format)

    def iter_torch_batches(self, *, batch_size=256, drop_last=False, device=None, dtypes=None):
        """iter_batches with each column (or the whole batch) as a tensor on
        `device` (default: the rank's, train.torch.get_device())."""
        import torch
        if device is None:
            device = get_device()

        def tensor(values, key=None):
            dtype = dtypes.get(key) if isinstance(dtypes, dict) else dtypes
            return torch.as_tensor(values, dtype=dtype, device=device)

        for batch in self.iter_batches(batch_size=batch_size, drop_last=drop_last):
            if isinstance(batch, dict):
                yield {key: tensor(values, key) for key, values in batch.items()}
            else:
                yield tensor(batch)


def _batch(rows, batch_format):
    import numpy as np
    if batch_format == "pandas":
        import pandas as pd
        return pd.DataFrame(rows)
    if rows and all(isinstance(row, dict) for row in rows):
        return {key: np.asarray([row[key] for row in rows]) for key in rows[0]}
    return np.asarray(rows)


def materialise(datasets):
    """{name: list of rows} from TorchTrainer's datasets argument."""
    if not isinstance(datasets, dict):
        raise ValueError(f"TorchTrainer: datasets must be a dict {{name: iterable of rows}}, "
                         f"got {type(datasets).__name__}")
    out = {}
    for name, rows in datasets.items():
        try:
            out[str(name)] = list(rows)
        except TypeError:
            raise ValueError(f"TorchTrainer: datasets[{name!r}] is not iterable "
                             f"({type(rows).__name__})") from None
    return out


def get_dataset_shard(name):
    """This rank's shard of TorchTrainer's datasets[name]."""
    datasets = _rank_context.datasets()
    if datasets is None:
        raise RuntimeError("get_dataset_shard() runs inside a TorchTrainer's train function "
                           "whose trainer was given datasets=")
    if name not in datasets:
        raise KeyError(f"get_dataset_shard: no dataset {name!r}; the trainer has "
                       f"{sorted(datasets)}")
    context = get_context()
    return DatasetShard(datasets[name][context.get_world_rank()::context.get_world_size()])
