"""Ray Data's Dataset, in process: a list of row dicts in the driver's
memory. Each transformation runs at once and returns a new Dataset; a
Dataset pickles with its rows (so it travels in `datasets=` and in a
param_space as any value). DataIterator reads one rank's rows: numpy or
pandas batches, or torch tensors on the rank's device."""

import builtins
import glob
import os
import random

from tunerun.data._batch import check_format, from_batch, to_batch


class Schema:
    """Column names and the Python types of the first row's values
    (Ray's Schema has Arrow types: here they are type names)."""

    def __init__(self, names, types):
        self.names = list(names)
        self.types = list(types)

    def __repr__(self):
        width = max((len(n) for n in self.names), default=0)
        lines = [f"{n:<{width}}  {t}" for n, t in zip(self.names, self.types)]
        return "Column" + " " * max(width - 4, 2) + "Type\n" + "\n".join(lines)


class Dataset:
    """Rows, each a dict. Ray's reading, transforming and consuming calls;
    `count()` and `take()` are exact as everything is in memory."""

    def __init__(self, rows):
        self._rows = list(rows)

    def __repr__(self):
        names = self.columns() if self._rows else []
        return f"Dataset(num_rows={len(self._rows)}, schema={{{', '.join(names)}}})"

    # Transformations.
    def map(self, fn, *, fn_args=(), fn_kwargs=None, fn_constructor_args=(),
            fn_constructor_kwargs=None, **_ray_options):
        """fn(row) -> row for each row. A class is built once
        (fn_constructor_args) and its instance called, as Ray's actor pool."""
        fn = _callable(fn, fn_constructor_args, fn_constructor_kwargs)
        return Dataset(fn(row, *fn_args, **(fn_kwargs or {})) for row in self._rows)

    def flat_map(self, fn, *, fn_args=(), fn_kwargs=None, fn_constructor_args=(),
                 fn_constructor_kwargs=None, **_ray_options):
        fn = _callable(fn, fn_constructor_args, fn_constructor_kwargs)
        return Dataset(out for row in self._rows for out in fn(row, *fn_args, **(fn_kwargs or {})))

    def map_batches(self, fn, *, batch_size="default", batch_format="default", fn_args=(),
                    fn_kwargs=None, fn_constructor_args=(), fn_constructor_kwargs=None,
                    zero_copy_batch=False, **_ray_options):
        """fn(batch) -> batch over batches of batch_size rows (Ray's default
        1024; None: one batch); a batch is a dict of numpy columns, or a
        DataFrame with batch_format="pandas". fn returns either."""
        check_format(batch_format)
        fn = _callable(fn, fn_constructor_args, fn_constructor_kwargs)
        size = 1024 if batch_size == "default" else (batch_size or max(len(self._rows), 1))
        out = []
        for start in builtins.range(0, len(self._rows), size):
            batch = to_batch(self._rows[start:start + size], batch_format)
            out.extend(from_batch(fn(batch, *fn_args, **(fn_kwargs or {}))))
        return Dataset(out)

    def filter(self, fn=None, *, expr=None, **_ray_options):
        if fn is None:
            raise ValueError("Dataset.filter: give a function of the row (expressions are "
                             "not supported)")
        return Dataset(row for row in self._rows if fn(row))

    def add_column(self, name, fn, *, batch_format="pandas", **_ray_options):
        """fn(batch) -> the new column's values, batch by batch as Ray's."""
        def add(batch):
            batch[name] = fn(batch)
            return batch
        return self.map_batches(add, batch_format=batch_format)

    def drop_columns(self, cols, **_ray_options):
        return Dataset({k: v for k, v in row.items() if k not in cols} for row in self._rows)

    def select_columns(self, cols, **_ray_options):
        cols = [cols] if isinstance(cols, str) else list(cols)
        return Dataset({k: row[k] for k in cols} for row in self._rows)

    def rename_columns(self, names, **_ray_options):
        return Dataset({names.get(k, k): v for k, v in row.items()} for row in self._rows)

    def random_shuffle(self, *, seed=None, **_ray_options):
        rows = list(self._rows)
        random.Random(seed).shuffle(rows)
        return Dataset(rows)

    def randomize_block_order(self, *, seed=None):
        return self

    def repartition(self, num_blocks, **_ray_options):
        return self

    def materialize(self):
        return self

    def limit(self, limit):
        return Dataset(self._rows[:limit])

    def sort(self, key, descending=False):
        keys = [key] if isinstance(key, str) else list(key)
        return Dataset(sorted(self._rows, key=lambda r: tuple(r[k] for k in keys),
                              reverse=descending))

    def union(self, *others):
        rows = list(self._rows)
        for other in others:
            rows.extend(other._rows)
        return Dataset(rows)

    def split(self, n, *, equal=False, locality_hints=None):
        """n Datasets, contiguous, whose sizes differ by at most one (equal:
        the extra rows dropped)."""
        size, extra = divmod(len(self._rows), n)
        out, start = [], 0
        for i in builtins.range(n):
            end = start + size + (0 if equal or i >= extra else 1)
            out.append(Dataset(self._rows[start:end]))
            start = end
        return out

    def split_at_indices(self, indices):
        bounds = [0, *indices, len(self._rows)]
        return [Dataset(self._rows[a:b]) for a, b in zip(bounds, bounds[1:])]

    def train_test_split(self, test_size, *, shuffle=False, seed=None, stratify=None):
        """(train, test): the last test_size rows (a fraction, or a count)
        are the test set, after a seeded shuffle when shuffle=True."""
        ds = self.random_shuffle(seed=seed) if shuffle else self
        n = len(ds._rows)
        if isinstance(test_size, float):
            if not 0 < test_size < 1:
                raise ValueError(f"train_test_split: test_size {test_size} is not in (0, 1)")
            count = int(n * test_size)
        else:
            if not 0 < test_size < n:
                raise ValueError(f"train_test_split: test_size {test_size} is not in (0, {n})")
            count = test_size
        train, test = ds.split_at_indices([n - count])
        return train, test

    # Consuming.
    def count(self):
        return len(self._rows)

    def take(self, limit=20):
        return list(self._rows[:limit])

    def take_all(self, limit=None):
        return list(self._rows)

    def take_batch(self, batch_size=20, *, batch_format="default"):
        check_format(batch_format)
        return to_batch(self._rows[:batch_size], batch_format)

    def show(self, limit=20):
        for row in self._rows[:limit]:
            print(row)

    def columns(self, fetch_if_missing=True):
        return list(self._rows[0]) if self._rows else []

    def schema(self, fetch_if_missing=True):
        """Column names and types, from the first row (None for an empty Dataset)."""
        if not self._rows:
            return None
        first = self._rows[0]
        return Schema(first, (type(v).__name__ for v in first.values()))

    def iterator(self):
        return DataIterator(self._rows)

    def iter_rows(self):
        return iter(self._rows)

    def iter_batches(self, **kwargs):
        return self.iterator().iter_batches(**kwargs)

    def iter_torch_batches(self, **kwargs):
        return self.iterator().iter_torch_batches(**kwargs)

    def to_pandas(self, limit=None):
        return to_batch(self._rows if limit is None else self._rows[:limit], "pandas")

    def to_numpy_refs(self):
        raise NotImplementedError("Dataset.to_numpy_refs: there are no object refs here")

    def sum(self, on):
        return builtins.sum(row[on] for row in self._rows)

    def min(self, on):
        return builtins.min(row[on] for row in self._rows)

    def max(self, on):
        return builtins.max(row[on] for row in self._rows)

    def mean(self, on):
        return self.sum(on) / len(self._rows)

    def std(self, on, ddof=1):
        import numpy as np
        return float(np.std([row[on] for row in self._rows], ddof=ddof))

    def unique(self, column):
        return list(dict.fromkeys(row[column] for row in self._rows))

    def write_csv(self, path, **_ray_options):
        os.makedirs(path, exist_ok=True)
        self.to_pandas().to_csv(os.path.join(path, "data.csv"), index=False)

    def write_json(self, path, **_ray_options):
        os.makedirs(path, exist_ok=True)
        self.to_pandas().to_json(os.path.join(path, "data.json"), orient="records", lines=True)


class DataIterator:
    """One rank's rows of one dataset (train.get_dataset_shard()), or a
    whole Dataset's, read in order: Ray's DataIterator."""

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
        no effect (the rows are in memory). An iterable, as Ray's: each
        `for` over it reads the rows again (an epoch each)."""
        check_format(batch_format)
        return BatchIterable(lambda: self._batches(batch_size, batch_format, drop_last,
                                                   local_shuffle_buffer_size, local_shuffle_seed))

    def _batches(self, batch_size, batch_format, drop_last, local_shuffle_buffer_size,
                 local_shuffle_seed):
        rows = self._rows
        if local_shuffle_buffer_size:
            import random
            rows = list(rows)
            random.Random(local_shuffle_seed).shuffle(rows)
        if batch_size is None:
            batch_size = max(len(rows), 1)
        for start in builtins.range(0, len(rows), batch_size):
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

        def batches():
            for batch in self.iter_batches(batch_size=batch_size, drop_last=drop_last,
                                           **kwargs):
                if collate_fn is not None:
                    yield collate_fn(batch)
                elif isinstance(batch, dict):
                    yield {key: tensor(values, key) for key, values in batch.items()}
                else:
                    yield tensor(batch)

        return BatchIterable(batches)

    def materialize(self):
        """These rows as a Dataset (Ray's DataIterator.materialize())."""
        return Dataset(self._rows)

    def to_pandas(self):
        return to_batch(self._rows, "pandas")


class BatchIterable:
    """What iter_batches and iter_torch_batches return: an iterable whose
    every iteration reads the batches anew (Ray's, which the Hugging Face
    and Lightning helpers take as a dataset of ready batches)."""

    def __init__(self, make):
        self._make = make

    def __iter__(self):
        return iter(self._make())


def _callable(fn, args, kwargs):
    if isinstance(fn, type):
        return fn(*args, **(kwargs or {}))
    return fn


def from_items(items, **_ray_options):
    """A Dataset of `items`: dicts are rows, other values become {"item": value}."""
    return Dataset(item if isinstance(item, dict) else {"item": item} for item in items)


def range(n, **_ray_options):
    """Rows {"id": 0} ... {"id": n - 1}."""
    return Dataset({"id": i} for i in builtins.range(n))


def from_numpy(ndarrays):
    """Rows {"data": a[i]} over the first axis of an array (or of each of a list)."""
    arrays = ndarrays if isinstance(ndarrays, list) else [ndarrays]
    return Dataset(row for array in arrays for row in from_batch({"data": array}))


def from_pandas(dfs):
    """The rows of a DataFrame (or of each of a list), index dropped."""
    frames = dfs if isinstance(dfs, list) else [dfs]
    return Dataset(row for frame in frames for row in frame.to_dict("records"))


def _files(paths, suffixes):
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    out = []
    for path in map(os.fspath, paths):
        if "://" in path:
            raise ValueError(f"{path}: only local files are read here (no object stores)")
        if os.path.isdir(path):
            out.extend(sorted(p for p in glob.glob(os.path.join(path, "**", "*"), recursive=True)
                              if os.path.isfile(p) and p.endswith(suffixes)))
        elif os.path.exists(path):
            out.append(path)
        else:
            raise FileNotFoundError(path)
    return out


def read_csv(paths, **pandas_options):
    """Every CSV file of `paths` (files or folders), read with pandas."""
    import pandas as pd
    pandas_options = {k: v for k, v in pandas_options.items()
                      if k not in ("parallelism", "ray_remote_args", "filesystem",
                                   "override_num_blocks", "include_paths")}
    return from_pandas([pd.read_csv(p, **pandas_options)
                        for p in _files(paths, (".csv", ".csv.gz"))])


def read_json(paths, *, lines=None, **pandas_options):
    """Every JSON file of `paths`: JSON Lines (one object a line, as Ray's
    reader expects) or one array of objects."""
    import json
    rows = []
    for path in _files(paths, (".json", ".jsonl")):
        with open(path) as f:
            text = f.read()
        stripped = text.lstrip()
        if stripped.startswith("["):
            rows.extend(json.loads(stripped))
        else:
            rows.extend(json.loads(line) for line in text.splitlines() if line.strip())
    return from_items(rows)
