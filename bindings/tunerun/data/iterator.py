"""Ray Data's DataIterator over a list of rows: what train.get_dataset_shard()
returns in a rank, and what Dataset's iter_* calls use. Batches are "numpy"
(a dict of numpy columns; Ray's "default"), "pandas" (a DataFrame) or torch
tensors on the rank's device."""

_FORMATS = ("default", "numpy", "pandas")


class DataIterator:
    """One rank's rows of one dataset (or a whole Dataset's), read in order."""

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

    def iter_batches(self, *, batch_size=256, batch_format="default", drop_last=False,
                     prefetch_batches=1, local_shuffle_buffer_size=None, local_shuffle_seed=None,
                     **_ignored):
        """Batches of batch_size rows (None: one batch of every row; the last
        may be shorter unless drop_last). local_shuffle_buffer_size shuffles
        the rows first (seeded by local_shuffle_seed); prefetch_batches has
        no effect (the rows are in memory)."""
        check_format(batch_format)
        rows = self._rows
        if local_shuffle_buffer_size:
            import random
            rows = list(rows)
            random.Random(local_shuffle_seed).shuffle(rows)
        if batch_size is None:
            batch_size = max(len(rows), 1)
        for start in range(0, len(rows), batch_size):
            chunk = rows[start:start + batch_size]
            if drop_last and len(chunk) < batch_size:
                return
            yield to_batch(chunk, batch_format)

    def iter_torch_batches(self, *, batch_size=256, dtypes=None, device="auto", collate_fn=None,
                           drop_last=False, **kwargs):
        """iter_batches with each column as a tensor on `device` ("auto":
        the rank's, train.torch.get_device()); collate_fn, when given, gets
        the numpy batch and returns what is yielded, as Ray's."""
        import torch
        if device in ("auto", None):
            from tunerun.train._device import get_device
            device = get_device()

        def tensor(values, key=None):
            dtype = dtypes.get(key) if isinstance(dtypes, dict) else dtypes
            return torch.as_tensor(values, dtype=dtype, device=device)

        for batch in self.iter_batches(batch_size=batch_size, drop_last=drop_last, **kwargs):
            if collate_fn is not None:
                yield collate_fn(batch)
            elif isinstance(batch, dict):
                yield {key: tensor(values, key) for key, values in batch.items()}
            else:
                yield tensor(batch)

    def materialize(self):
        """These rows as a Dataset (Ray's DataIterator.materialize())."""
        from tunerun.data.dataset import Dataset
        return Dataset(self._rows)

    def to_pandas(self):
        return to_batch(self._rows, "pandas")


def check_format(batch_format):
    if batch_format not in _FORMATS:
        raise ValueError(f"batch_format {batch_format!r} is not one of {', '.join(_FORMATS)}")


def to_batch(rows, batch_format):
    """rows (dicts) as one batch: a DataFrame for "pandas", else a dict of
    numpy columns."""
    import numpy as np
    if batch_format == "pandas":
        import pandas as pd
        return pd.DataFrame(list(rows))
    if rows and all(isinstance(row, dict) for row in rows):
        columns = {}
        for key in rows[0]:
            values = [row[key] for row in rows]
            try:
                columns[key] = np.asarray(values)
            except ValueError:  # ragged: an object column, as Ray's
                columns[key] = np.array(values + [None], dtype=object)[:-1]
        return columns
    return np.asarray(rows)


def from_batch(batch):
    """A batch a map_batches function returned (a dict of columns, a
    DataFrame, a pyarrow-less list of dicts) as rows."""
    if isinstance(batch, list):
        return [row if isinstance(row, dict) else {"item": row} for row in batch]
    if hasattr(batch, "to_dict") and hasattr(batch, "columns"):  # a pandas DataFrame
        return batch.to_dict("records")
    if isinstance(batch, dict):
        keys = list(batch)
        if not keys:
            return []
        lengths = {len(batch[k]) for k in keys}
        if len(lengths) != 1:
            raise ValueError(f"map_batches: the returned columns differ in length "
                             f"({ {k: len(batch[k]) for k in keys} })")
        return [{k: _scalar(batch[k][i]) for k in keys} for i in range(lengths.pop())]
    raise ValueError(f"map_batches: a batch function returns a dict of columns or a pandas "
                     f"DataFrame, got {type(batch).__name__}")


def _scalar(value):
    """numpy scalars as Python values; arrays (a row's tensor) stay arrays."""
    item = getattr(value, "item", None)
    if item is not None and getattr(value, "ndim", 1) == 0:
        return item()
    return value
