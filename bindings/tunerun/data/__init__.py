"""Ray Data's reading and transforming calls, in process, over lists of
rows: enough for Ray Train's examples (`datasets=` and
train.get_dataset_shard). A Dataset here is materialised in the driver's
memory and each call runs at once; there is no streaming, no blocks, no
cluster. Rows are dicts ({"item": x} for a bare value, as Ray's). pandas
and numpy are imported by the calls that need them."""

from tunerun.data.dataset import (DataIterator, Dataset, Schema, from_items, from_numpy,
                                  from_pandas, range, read_csv, read_json)
from tunerun.data.data_config import DataConfig

__all__ = ["DataConfig", "DataIterator", "Dataset", "Schema", "from_items", "from_numpy",
           "from_pandas", "range", "read_csv", "read_json"]
