# After Ray Data's "Transforming Data", "Iterating over Data" and
# "Preprocessing Structured Data" guides (doc/source/data/transforming-data.rst,
# iterating-over-data.rst, preprocessors.rst) as Train scripts use them:
# from_pandas/from_numpy/from_items/range, train_test_split, add_column,
# drop_columns, select_columns, limit, aggregations, unique, split,
# iter_batches with pandas and numpy formats, materialize, and
# StandardScaler fitted and applied; MinMaxScaler and Concatenator in a Chain
# (Ray 2.x's tabular Train examples).
import numpy as np
import pandas as pd

import tunerun as ray
from tunerun.data.preprocessors import Chain, Concatenator, MinMaxScaler, StandardScaler

df = pd.DataFrame({"x": np.arange(100, dtype=float), "y": np.arange(100) % 3})
ds = ray.data.from_pandas(df)
assert ds.count() == 100
train_ds, test_ds = ds.train_test_split(test_size=0.25, shuffle=True, seed=42)
assert train_ds.count() == 75 and test_ds.count() == 25

ds2 = ds.add_column("z", lambda batch: batch["x"] * 2)
assert set(ds2.columns()) == {"x", "y", "z"}
assert ds2.drop_columns(["z"]).columns() == ["x", "y"]
assert ds2.select_columns(["z"]).take(2) == [{"z": 0.0}, {"z": 2.0}]
assert ds.limit(5).count() == 5
assert ds.sum("x") == sum(range(100))
assert ds.min("x") == 0 and ds.max("x") == 99
assert abs(ds.mean("x") - 49.5) < 1e-9
assert sorted(ds.unique("y")) == [0, 1, 2]

shards = ds.split(2)
assert [s.count() for s in shards] == [50, 50]
for batch in ds.iter_batches(batch_size=32, batch_format="pandas"):
    assert isinstance(batch, pd.DataFrame)
    assert len(batch) <= 32
n = 0
for batch in ds.iter_batches(batch_size=40, batch_format="numpy"):
    assert isinstance(batch["x"], np.ndarray)
    n += len(batch["x"])
assert n == 100

arr = ray.data.from_numpy(np.ones((10, 3)))
assert arr.count() == 10
assert ray.data.range(10).map(lambda r: {"id": r["id"] * 2}).sum("id") == 90
items = ray.data.from_items([{"a": i} for i in range(5)]).materialize()
assert items.count() == 5

scaler = StandardScaler(columns=["x"])
scaled = scaler.fit_transform(train_ds)
xs = scaled.to_pandas()["x"]
assert abs(xs.mean()) < 1e-9 and abs(xs.std(ddof=0) - 1) < 1e-9
test_scaled = scaler.transform(test_ds).to_pandas()
assert len(test_scaled) == 25

chain = Chain(MinMaxScaler(columns=["x"]), Concatenator(output_column_name="features",
                                                        exclude=["y"], dtype=np.float32))
out = chain.fit_transform(ds)
row = out.take(2)[1]
assert set(row) == {"features", "y"}, row
assert row["features"].dtype == np.float32 and abs(row["features"][0] - 1 / 99) < 1e-6
batch = chain.transform_batch(pd.DataFrame({"x": [99.0], "y": [1]}))
assert abs(batch["features"].iloc[0][0] - 1.0) < 1e-6
