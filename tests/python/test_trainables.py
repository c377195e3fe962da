"""Class trainables (tune.Trainable), tune.with_parameters, tune.sample_from
and Domain.sample()."""

import os
import random
import subprocess
import sys
import textwrap

import pytest

from tunerun import train, tune

import trainables


def run_config(storage, name, **kwargs):
    return train.RunConfig(name=name, storage_path=storage, verbose=0, **kwargs)


def test_with_parameters_reaches_every_worker(storage):
    table = trainables.Table(list(range(1000)))
    grid = tune.Tuner(tune.with_parameters(trainables.with_table, table=table, scale=2),
                      param_space={"x": tune.grid_search([1, 2])},
                      run_config=run_config(storage, "with_params")).fit()
    assert sorted(r.metrics["total"] for r in grid) == [999001, 999002]
    # Composes with with_resources in either order.
    grid = tune.Tuner(tune.with_resources(tune.with_parameters(trainables.with_table, table=table),
                                          {"cpu": 1}),
                      param_space={"x": 0}, run_config=run_config(storage, "both")).fit()
    assert grid[0].metrics["total"] == 499500


def test_class_trainable_steps_and_checkpoints_at_end(storage):
    grid = tune.Tuner(tune.with_parameters(trainables.Counter, offset=100),
                      param_space={"step": tune.grid_search([1, 10])},
                      run_config=run_config(storage, "counter",
                                            stop={"training_iteration": 5})).fit()
    assert not grid.errors
    assert sorted(r.metrics["count"] for r in grid) == [105, 150]
    for r in grid:
        assert r.metrics["training_iteration"] == 5
        assert r.checkpoint is not None  # checkpoint_at_end
        with r.checkpoint.as_directory() as d:
            with open(f"{d}/count.json") as f:
                assert int(f.read()) == r.metrics["count"]


def test_class_trainable_done_ends_the_trial(storage):
    grid = tune.Tuner(trainables.Counter, param_space={"step": 3, "until": 7},
                      run_config=run_config(storage, "done")).fit()
    assert grid[0].metrics["count"] == 9 and grid[0].metrics["training_iteration"] == 3


@pytest.mark.parametrize("as_dict", [False, True])
def test_class_trainable_resumes_from_its_checkpoint(storage, as_dict):
    # Killed at iteration 4 with a checkpoint every 2 iterations: the retry
    # loads the checkpoint of iteration 2 and counts on from there.
    grid = tune.Tuner(trainables.Counter,
                      param_space={"step": 1, "crash_at": 4, "as_dict": as_dict},
                      run_config=run_config(
                          storage, f"resume_{as_dict}", stop={"training_iteration": 6},
                          checkpoint_config=train.CheckpointConfig(checkpoint_frequency=2),
                          failure_config=train.FailureConfig(max_failures=1))).fit()
    assert not grid.errors
    m = grid[0].metrics
    assert (m["count"], m["training_iteration"], m["restored_from"]) == (6, 6, 2)


def test_class_trainable_checkpoints_where_hyperband_pauses(storage):
    # No checkpoint_frequency: the class saves where HyperBand may pause it
    # (its milestones), so the paused trials resume and count on unbroken.
    grid = tune.Tuner(trainables.Counter,
                      param_space={"step": tune.grid_search([1, 2, 3, 4, 5, 6, 7, 8])},
                      tune_config=tune.TuneConfig(
                          metric="count", mode="max", max_concurrent_trials=1,
                          scheduler=tune.schedulers.HyperBandScheduler(
                              time_attr="training_iteration", max_t=9, reduction_factor=3)),
                      run_config=run_config(storage, "hb_class",
                                            checkpoint_config=train.CheckpointConfig(
                                                checkpoint_at_end=False))).fit()
    assert not grid.errors, [r.error for r in grid]
    for r in grid:
        assert [h["count"] for h in r.history] == [
            r.config["step"] * (i + 1) for i in range(len(r.history))]
    import sqlite3
    with sqlite3.connect(os.path.join(grid.experiment_path, "experiment.db")) as db:
        paused = db.execute("SELECT count(*) FROM trial_events WHERE to_status = 'PAUSED'")
        assert paused.fetchone()[0] > 0
        saved = {i for (i,) in db.execute("SELECT training_iteration FROM checkpoints")}
    assert saved and saved <= {3, 9}, saved  # HyperBand's milestones only


def test_a_class_that_is_not_a_trainable_is_refused(storage):
    with pytest.raises(ValueError, match="not a tune.Trainable"):
        tune.Tuner(trainables.Table, run_config=run_config(storage, "x"))


def test_sample_from_computes_from_the_config(storage):
    grid = tune.Tuner(trainables.quadratic,
                      param_space={"x": tune.uniform(0, 1), "steps": 1,
                                   "const": {"twice": tune.sample_from(
                                       lambda spec: spec.config.x * 2)}},
                      tune_config=tune.TuneConfig(num_samples=3),
                      run_config=run_config(storage, "sample_from")).fit()
    assert len(grid) == 3
    for r in grid:
        assert r.config["const"]["twice"] == pytest.approx(2 * r.config["x"])


def test_sample_from_error_ends_fit(storage):
    with pytest.raises(ZeroDivisionError):
        tune.Tuner(trainables.quadratic,
                   param_space={"x": tune.sample_from(lambda spec: 1 / 0)},
                   run_config=run_config(storage, "bad_sample_from")).fit()


def test_domain_sample():
    value = tune.uniform(2, 3).sample()
    assert 2 <= value < 3
    ints = tune.randint(0, 5).sample(size=200)
    assert set(ints) == {0, 1, 2, 3, 4}
    assert all(isinstance(i, int) for i in ints)
    assert tune.choice(["a", "b"]).sample() in ("a", "b")
    # The same seed draws the same values; a random.Random seeds it too.
    draw = tune.loguniform(1e-4, 1e-1).sample
    assert draw(size=5, random_state=7) == draw(size=5, random_state=7)
    assert draw(size=5, random_state=random.Random(3)) == draw(size=5,
                                                               random_state=random.Random(3))
    assert all(1e-4 <= v < 1e-1 for v in draw(size=50))
    assert set(tune.qrandint(0, 10, 5).sample(size=50, random_state=1)) == {0, 5, 10}
    with pytest.raises(ValueError, match="grid_search"):
        tune.grid_search([1, 2]).sample()
    with pytest.raises(ValueError, match="random_state"):
        tune.uniform(0, 1).sample(random_state="seed")


def test_script_class_trainable_with_script_parameters(tmp_path):
    # A Trainable and a with_parameters value both defined in the script the
    # user runs (module __main__ on the driver, re-imported in each worker).
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        from tunerun import train, tune

        class Box:
            def __init__(self, value):
                self.value = value

        class Adds(tune.Trainable):
            def setup(self, config, box):
                self.total = box.value

            def step(self):
                self.total += self.config["x"]
                return {"total": self.total}

        if __name__ == "__main__":
            grid = tune.Tuner(tune.with_parameters(Adds, box=Box(100)), param_space={"x": 5},
                              run_config=train.RunConfig(name="s", storage_path="runs",
                                                         verbose=0,
                                                         stop={"training_iteration": 3})).fit()
            print("TOTAL", grid[0].metrics["total"], grid.errors)
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "TOTAL 115 []" in proc.stdout


def test_reuse_actors_resets_a_kept_instance(storage):
    grid = tune.Tuner(trainables.Resettable, param_space={"v": tune.grid_search([1, 2, 3])},
                      tune_config=tune.TuneConfig(reuse_actors=True, max_concurrent_trials=1),
                      run_config=run_config(storage, "reset")).fit()
    assert [r.status for r in grid] == ["TERMINATED"] * 3
    assert len({r.metrics["pid"] for r in grid}) == 1
    assert len({r.metrics["instance"] for r in grid}) == 1
    # One setup, then reset_config per trial; each trial counts from iteration 1.
    assert [r.metrics["setups"] for r in grid] == [1, 1, 1]
    assert [r.metrics["resets"] for r in grid] == [0, 1, 2]
    assert [r.metrics["value"] for r in grid] == [1, 2, 3]
    assert [r.metrics["trial"] for r in grid] == [r.trial_id for r in grid]
    assert all([h["training_iteration"] for h in r.history] == [1, 2] for r in grid)
    assert [r.metrics["cleanups"] for r in grid] == [0, 0, 0]


def test_a_refused_reset_means_a_new_instance_in_the_same_process(storage):
    grid = tune.Tuner(trainables.Resettable,
                      param_space={"v": 1, "refuse": tune.grid_search([False, True])},
                      tune_config=tune.TuneConfig(reuse_actors=True, max_concurrent_trials=1),
                      run_config=run_config(storage, "refuse")).fit()
    first, second = grid
    assert first.metrics["pid"] == second.metrics["pid"]
    assert (second.metrics["setups"], second.metrics["cleanups"]) == (2, 1)
