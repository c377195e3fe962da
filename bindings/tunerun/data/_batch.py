"""Batches of rows for Ray Data's calls (tunerun/data/dataset.py): "numpy"
(a dict of numpy columns; Ray's "default") or "pandas" (a DataFrame), and
back to rows. A leaf: numpy and pandas are imported by the calls."""

_FORMATS = ("default", "numpy", "pandas")


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
