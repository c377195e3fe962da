"""ray.data (tunerun.data): every call a Ray Train script makes, over rows
held in the driver, and what a TorchTrainer's ranks read of them
(train.get_dataset_shard, DataConfig)."""

import json
import os

import pytest

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")

import tunerun as ray  # noqa: E402
from tunerun import train  # noqa: E402


def test_from_items_keeps_dicts_and_wraps_other_values():
    assert ray.data.from_items([{"a": 1}, {"a": 2}]).take_all() == [{"a": 1}, {"a": 2}]
    assert ray.data.from_items([3, "x"]).take_all() == [{"item": 3}, {"item": "x"}]


def test_range_from_numpy_and_from_pandas():
    assert ray.data.range(3).take_all() == [{"id": 0}, {"id": 1}, {"id": 2}]
    rows = ray.data.from_numpy(np.arange(6).reshape(3, 2)).take_all()
    assert [list(r["data"]) for r in rows] == [[0, 1], [2, 3], [4, 5]]
    frame = pd.DataFrame({"x": [1, 2], "y": ["a", "b"]}, index=[10, 20])
    assert ray.data.from_pandas(frame).take_all() == [{"x": 1, "y": "a"}, {"x": 2, "y": "b"}]
    assert ray.data.from_pandas([frame, frame]).count() == 4


def test_read_csv_and_read_json_read_files_and_folders(tmp_path):
    folder = tmp_path / "csv"
    folder.mkdir()
    (folder / "a.csv").write_text("x,y\n1,2\n3,4\n")
    (folder / "b.csv").write_text("x,y\n5,6\n")
    (folder / "notes.txt").write_text("not data")
    assert ray.data.read_csv(str(folder)).take_all() == [{"x": 1, "y": 2}, {"x": 3, "y": 4},
                                                         {"x": 5, "y": 6}]
    assert ray.data.read_csv(str(folder / "b.csv")).count() == 1
    lines = tmp_path / "rows.jsonl"
    lines.write_text('{"a": 1}\n{"a": 2}\n')
    array = tmp_path / "rows.json"
    array.write_text(json.dumps([{"a": 3}]))
    assert ray.data.read_json([str(lines), str(array)]).take_all() == [{"a": 1}, {"a": 2},
                                                                       {"a": 3}]
    with pytest.raises(FileNotFoundError):
        ray.data.read_csv(str(tmp_path / "missing.csv"))
    with pytest.raises(ValueError, match="only local files"):
        ray.data.read_csv("s3://bucket/iris.csv")


def test_map_map_batches_and_filter():
    ds = ray.data.range(10)
    assert ds.map(lambda r: {"id": r["id"], "sq": r["id"] ** 2}).take(3) == [
        {"id": 0, "sq": 0}, {"id": 1, "sq": 1}, {"id": 2, "sq": 4}]
    sizes = []

    def double(batch):
        sizes.append(len(batch["id"]))
        assert isinstance(batch["id"], np.ndarray)
        return {"id": batch["id"] * 2}

    assert ds.map_batches(double, batch_size=4).take_all() == [{"id": 2 * i} for i in range(10)]
    assert sizes == [4, 4, 2]

    def as_frame(frame):
        assert isinstance(frame, pd.DataFrame)
        return frame.assign(half=frame["id"] / 2)

    assert ds.map_batches(as_frame, batch_format="pandas").take(2)[1] == {"id": 1, "half": 0.5}

    class AddOffset:  # a class is built once, with its constructor's arguments
        def __init__(self, offset):
            self.offset = offset

        def __call__(self, batch):
            return {"id": batch["id"] + self.offset}

    assert ds.map_batches(AddOffset, fn_constructor_args=(100,)).take(1) == [{"id": 100}]
    assert ds.filter(lambda r: r["id"] % 3 == 0).take_all() == [{"id": 0}, {"id": 3},
                                                                {"id": 6}, {"id": 9}]
    with pytest.raises(ValueError, match="expressions are not supported"):
        ds.filter(expr="id > 3")
    with pytest.raises(ValueError, match="batch_format 'arrow'"):
        ds.map_batches(double, batch_format="arrow")


def test_random_shuffle_is_a_seeded_permutation():
    ds = ray.data.range(50)
    once = ds.random_shuffle(seed=7).take_all()
    assert once == ds.random_shuffle(seed=7).take_all()
    assert once != ds.take_all() and sorted(r["id"] for r in once) == list(range(50))


def test_train_test_split_by_fraction_and_by_count():
    train_ds, test_ds = ray.data.range(10).train_test_split(test_size=0.3)
    assert (train_ds.count(), test_ds.count()) == (7, 3)
    assert test_ds.take_all() == [{"id": 7}, {"id": 8}, {"id": 9}]
    train_ds, test_ds = ray.data.range(10).train_test_split(test_size=2, shuffle=True, seed=1)
    ids = {r["id"] for r in train_ds.take_all()} | {r["id"] for r in test_ds.take_all()}
    assert test_ds.count() == 2 and ids == set(range(10))
    with pytest.raises(ValueError, match="test_size 1.5 is not in"):
        ray.data.range(10).train_test_split(test_size=1.5)


def test_iter_batches_count_take_and_schema():
    ds = ray.data.from_items([{"x": i, "name": f"n{i}"} for i in range(5)])
    batches = list(ds.iter_batches(batch_size=2))
    assert [list(b["x"]) for b in batches] == [[0, 1], [2, 3], [4]]
    assert [len(b) for b in ds.iter_batches(batch_size=2, batch_format="pandas")] == [2, 2, 1]
    assert len(list(ds.iterator().iter_batches(batch_size=2, drop_last=True))) == 2
    assert ds.count() == 5 and ds.take(2) == [{"x": 0, "name": "n0"}, {"x": 1, "name": "n1"}]
    schema = ds.schema()
    assert schema.names == ["x", "name"] and schema.types == ["int", "str"]
    assert ray.data.from_items([]).schema() is None


def test_iter_torch_batches_gives_tensors():
    torch = pytest.importorskip("torch")
    ds = ray.data.from_items([{"x": float(i), "y": i} for i in range(4)])
    batches = list(ds.iter_torch_batches(batch_size=3, dtypes={"x": torch.float64}))
    assert [b["x"].dtype for b in batches] == [torch.float64, torch.float64]
    assert batches[0]["y"].tolist() == [0, 1, 2] and batches[1]["x"].tolist() == [3.0]
    summed = list(ds.iter_torch_batches(batch_size=4, collate_fn=lambda b: b["y"].sum()))
    assert summed == [6]


def shard_reader(config):
    """Each rank reports what get_dataset_shard gave it of both datasets."""
    context = train.get_context()
    shard = train.get_dataset_shard("train")
    whole = train.get_dataset_shard("valid")
    ids = [int(v) for batch in shard.iter_batches(batch_size=2) for v in batch["id"]]
    with open(os.path.join(config["out"], f"rank_{context.get_world_rank()}.json"), "w") as f:
        json.dump({"train": ids, "valid": whole.count()}, f)
    train.report({"rows": len(ids)})


@pytest.mark.parametrize("split_valid", [False, True])
def test_get_dataset_shard_splits_across_ranks_as_data_config_says(storage, tmp_path,
                                                                   split_valid):
    pytest.importorskip("torch")
    from tunerun.train.torch import TorchTrainer
    config = train.DataConfig(datasets_to_split="all" if split_valid else ["train"])
    trainer = TorchTrainer(
        shard_reader, train_loop_config={"out": str(tmp_path)},
        scaling_config=train.ScalingConfig(num_workers=2),
        datasets={"train": ray.data.range(7), "valid": ray.data.range(4)},
        dataset_config=config,
        run_config=train.RunConfig(name="shards", storage_path=storage, verbose=0))
    trainer.fit()
    seen = [json.loads((tmp_path / f"rank_{r}.json").read_text()) for r in range(2)]
    assert seen[0]["train"] == [0, 2, 4, 6] and seen[1]["train"] == [1, 3, 5]
    assert [s["valid"] for s in seen] == ([2, 2] if split_valid else [4, 4])


def test_data_config_names_what_it_splits():
    assert train.DataConfig().splits("anything")
    config = train.DataConfig(datasets_to_split=["train"])
    assert config.splits("train") and not config.splits("valid")
