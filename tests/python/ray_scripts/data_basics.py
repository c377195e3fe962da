# After Ray Data's "Key Concepts", "Loading Data" and "Transforming Data"
# guides (doc/source/data/key-concepts.rst, loading-data.rst,
# transforming-data.rst): reading CSV and JSON, map, filter, map_batches with
# numpy and pandas batches, a callable class, shuffling, take, count, schema.
import json
import os

import numpy as np
import pandas as pd

import tunerun as ray

os.makedirs("iris", exist_ok=True)
pd.DataFrame({"sepal length (cm)": [5.1, 4.9, 6.2, 5.9], "target": [0, 0, 1, 2]}).to_csv(
    "iris/train.csv", index=False)
with open("rows.json", "w") as f:
    f.write("\n".join(json.dumps({"text": t, "n": i}) for i, t in enumerate(["a", "bb", "ccc"])))

ds = ray.data.read_csv("iris")
print(ds.schema())
assert ds.count() == 4
assert ds.schema().names == ["sepal length (cm)", "target"]


def parse(row):
    row["long"] = row["sepal length (cm)"] > 5.0
    return row


assert sum(r["long"] for r in ds.map(parse).take_all()) == 3
assert ds.filter(lambda row: row["target"] == 0).count() == 2


def add_dog_years(batch: dict) -> dict:
    batch["doubled"] = batch["target"] * 2
    return batch


assert [r["doubled"] for r in ds.map_batches(add_dog_years).take(4)] == [0, 0, 2, 4]


def pandas_mean(df: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"mean": [df["sepal length (cm)"].mean()]})


means = ds.map_batches(pandas_mean, batch_format="pandas", batch_size=2).take_all()
assert [round(r["mean"], 2) for r in means] == [5.0, 6.05]


class TorchPredictor:
    def __init__(self):
        self.scale = 10

    def __call__(self, batch):
        return {"prediction": batch["target"] * self.scale}


assert ds.map_batches(TorchPredictor, concurrency=2).take(2) == [{"prediction": 0}] * 2

texts = ray.data.read_json("rows.json")
assert [r["text"] for r in texts.take(3)] == ["a", "bb", "ccc"]

numbers = ray.data.range(100)
shuffled = numbers.random_shuffle(seed=0)
assert sorted(r["id"] for r in shuffled.take_all()) == list(range(100))
assert ray.data.from_numpy(np.ones((3, 2))).take(1)[0]["data"].tolist() == [1.0, 1.0]
assert ray.data.from_pandas(pd.DataFrame({"a": [1, 2]})).take_all() == [{"a": 1}, {"a": 2}]
batches = list(numbers.iter_batches(batch_size=32))
assert [len(b["id"]) for b in batches] == [32, 32, 32, 4]
assert ray.data.from_items([1, 2]).take_all() == [{"item": 1}, {"item": 2}]
