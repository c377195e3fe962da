"""tunerun's Python API end to end: Ray Tune names over the C++ controller,
Python trials in worker processes."""

import json
import math
import os
import subprocess
import sys
import textwrap

import pytest

import tunerun
from tunerun import train, tune

import trainables


def run_config(storage, name, **kwargs):
    return train.RunConfig(name=name, storage_path=storage, verbose=0, **kwargs)


# --- bad input: ValueError naming the key, before anything starts ------------

def test_bad_domain_names_its_key(storage):
    with pytest.raises(ValueError, match=r"param_space\.model\.lr"):
        tune.Tuner(trainables.quadratic,
                   param_space={"model": {"lr": tune.loguniform(0.1, 0.01)}},
                   run_config=run_config(storage, "bad"))
    assert not os.path.exists(storage)


@pytest.mark.parametrize("tune_config, key", [
    (tune.TuneConfig(num_samples=0), "num_samples"),
    (tune.TuneConfig(metric="loss", mode="best"), "mode"),
    (tune.TuneConfig(metric="loss", mode="min",
                     scheduler=tune.schedulers.ASHAScheduler(reduction_factor=1)),
     "reduction_factor"),
])
def test_bad_tune_config_names_its_key(storage, tune_config, key):
    with pytest.raises(ValueError, match=key):
        tune.Tuner(trainables.quadratic, param_space={"x": 1}, tune_config=tune_config,
                   run_config=run_config(storage, "bad"))
    assert not os.path.exists(storage)


def test_lambdas_and_closures_run(storage):
    offset = 10

    def closure(config):
        train.report({"y": config["x"] + offset})
    for name, trainable in [("lambda", lambda config: {"y": config["x"] * 2}),
                            ("closure", closure)]:
        grid = tune.Tuner(trainable, param_space={"x": 1},
                          run_config=run_config(storage, name)).fit()
        assert grid[0].status == "TERMINATED", grid[0].error
    assert [tunerun.load(os.path.join(storage, name))[0].metrics["y"]
            for name in ("lambda", "closure")] == [2, 11]


# --- running Python trials ---------------------------------------------------

def test_grid_of_function_trials(storage):
    tuner = tune.Tuner(
        trainables.quadratic,
        param_space={"x": tune.grid_search([-1, 0, 2]), "const": {"s": "a"}},
        tune_config=tune.TuneConfig(metric="loss", mode="min"),
        run_config=run_config(storage, "grid"))
    grid = tuner.fit()
    assert len(grid) == 3 and grid.num_errors == 0 and grid.num_terminated == 3
    best = grid.get_best_result()
    assert best.config["x"] == 2
    assert best.config["const"] == {"s": "a"}
    assert best.metrics["training_iteration"] == 3
    assert best.metrics["loss"] == pytest.approx(1 / 3)
    df = grid.get_dataframe()
    assert sorted(df["config/x"]) == [-1, 0, 2]
    assert len(tunerun.load(os.path.join(storage, "grid"))) == 3


def test_nan_and_inf_round_trip_through_the_store(storage):
    """NaN and infinities in metrics and in the config come back from the
    experiment database as NaN and infinities; plain SQL reads every row."""
    import sqlite3
    const = {"big": -math.inf, "nan": math.nan}
    grid = tune.Tuner(trainables.non_finite,
                      param_space={"x": tune.grid_search([math.nan, -math.inf, 0.5, 2.0]),
                                   "const": const},
                      tune_config=tune.TuneConfig(metric="loss", mode="min"),
                      run_config=run_config(storage, "nonfinite")).fit()
    path = os.path.join(storage, "nonfinite")
    for results in (grid, tunerun.load(path)):
        assert len(results) == 4
        for r in results:
            assert r.metrics["got_inf"] is True and r.metrics["got_nan"] is True
            assert math.isnan(r.metrics["nan"]) and math.isnan(r.metrics["nested"]["v"][1])
            assert r.metrics["inf"] == math.inf and r.metrics["ninf"] == -math.inf
            assert r.config["const"]["big"] == -math.inf and math.isnan(r.config["const"]["nan"])
        # NaN and -inf are skipped by default, as Ray's filter_nan_and_inf.
        assert results.get_best_result().config["x"] == 0.5
        df = results.get_dataframe()
        assert df["nan"].isna().all() and (df["inf"] == math.inf).all()
        xs = sorted(df["config/x"].tolist(), key=repr)
        assert xs[:3] == [-math.inf, 0.5, 2.0] and math.isnan(xs[3])

    with sqlite3.connect(os.path.join(path, "experiment.db")) as db:
        rows = db.execute("SELECT json_extract(t.config, '$.x'), json_extract(r.metrics, '$.inf'),"
                          " json_extract(r.metrics_nonfinite, '$.\"/nan\"'), r.metrics"
                          " FROM results AS r JOIN trials AS t USING (trial_id)"
                          " ORDER BY t.trial_index").fetchall()
        assert [(x, inf, nan) for x, inf, nan, _ in rows] == [
            (None, math.inf, "NaN"), (-math.inf, math.inf, "NaN"),
            (0.5, math.inf, "NaN"), (2.0, math.inf, "NaN")]
        assert all(json.loads(text)["ninf"] == -math.inf for *_, text in rows)
        best = db.execute("SELECT json_extract(config, '$.x') FROM best_trial").fetchone()
        assert best == (0.5,)


def test_exception_fails_the_trial_with_its_traceback(storage):
    grid = tune.Tuner(trainables.fails_at_step_two, param_space={},
                      run_config=run_config(storage, "boom")).fit()
    result = grid[0]
    assert result.status == "ERROR"
    assert "ValueError: boom at step 2" in str(result.error)
    assert result.metrics["training_iteration"] == 2
    log = open(os.path.join(result.path, "rank_0.log")).read()
    assert "Traceback (most recent call last)" in log
    assert "in fails_at_step_two" in log


def test_killed_rank_restarts_from_its_checkpoint(storage):
    grid = tune.Tuner(trainables.checkpointed, param_space={},
                      run_config=run_config(storage, "kill",
                                            failure_config=train.FailureConfig(max_failures=1))
                      ).fit()
    result = grid[0]
    assert result.status == "TERMINATED", result.error
    assert result.metrics["step"] == 4 and result.metrics["resumed_at"] == 3
    assert result.metrics["training_iteration"] == 5
    assert os.path.isfile(os.path.join(result.checkpoint.path, "state.json"))


@pytest.mark.parametrize("reuse", [False, True])
def test_reuse_actors_keeps_python_ranks(storage, reuse):
    grid = tune.Tuner(trainables.quadratic,
                      param_space={"x": tune.grid_search([0, 1, 2]), "steps": 1},
                      tune_config=tune.TuneConfig(max_concurrent_trials=1, reuse_actors=reuse),
                      run_config=run_config(storage, "reuse")).fit()
    pids = {r.metrics["pid"] for r in grid}
    assert len(pids) == (1 if reuse else 3)


def test_asha_stops_worse_python_trials(storage):
    grid = tune.Tuner(
        trainables.slow_or_fast,
        param_space={"x": tune.grid_search([1, 2, 3, 4]), "iterations": 8},
        tune_config=tune.TuneConfig(
            metric="loss", mode="min", max_concurrent_trials=1,
            scheduler=tune.schedulers.ASHAScheduler(max_t=8, grace_period=1,
                                                    reduction_factor=2)),
        run_config=run_config(storage, "asha")).fit()
    iterations = {r.config["x"]: r.metrics["training_iteration"] for r in grid}
    assert iterations[1] == 8
    assert min(iterations.values()) < 8


# --- Python plug-ins, called by the controller with the GIL ------------------

class Recorder(tune.Callback):
    def __init__(self):
        self.events = []

    def on_trial_start(self, trial_id, config):
        self.events.append(("start", trial_id, config["x"]))

    def on_trial_result(self, trial_id, config, result):
        self.events.append(("result", trial_id, result["training_iteration"]))

    def on_trial_complete(self, trial_id, config, last_result):
        self.events.append(("complete", trial_id, last_result["training_iteration"]))


def test_python_callback_and_stopper(storage):
    recorder = Recorder()
    seen = []

    def stop_after_two(trial_id, result):
        seen.append(trial_id)
        return result["training_iteration"] >= 2

    grid = tune.Tuner(trainables.quadratic, param_space={"x": 1, "steps": 5},
                      run_config=run_config(storage, "plugins", callbacks=[recorder],
                                            stop=stop_after_two)).fit()
    trial = grid[0].trial_id
    assert grid[0].metrics["training_iteration"] == 2
    assert seen == [trial, trial]
    assert recorder.events == [("start", trial, 1), ("result", trial, 1), ("result", trial, 2),
                               ("complete", trial, 2)]


class Boom(tune.Callback):
    def on_trial_result(self, trial_id, config, result):
        raise KeyError("callback failed")


def test_python_callback_exception_ends_fit(storage):
    with pytest.raises(KeyError, match="callback failed"):
        tune.Tuner(trainables.quadratic, param_space={"x": 1},
                   run_config=run_config(storage, "boom_cb", callbacks=[Boom()])).fit()


@pytest.mark.parametrize("signame", ["SIGKILL", "SIGINT"])
def test_restore_after_killing_the_driver(storage, signame):
    """SIGKILL: the driver dies at once; SIGINT (Ctrl-C): fit() pauses the
    trial at its next checkpoint and returns. Either way restore finishes it."""
    import glob
    import signal
    import time
    driver = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import trainables
        from tunerun import tune, train
        tune.Tuner(trainables.slow_checkpointed,
                   param_space={{"clip": float("-inf"), "decay": float("nan")}},
                   run_config=train.RunConfig(name="killed", storage_path={storage!r},
                                              verbose=0)).fit()
    """)], cwd=os.path.dirname(os.path.abspath(__file__)))
    deadline = time.time() + 60

    def recorded():
        # A checkpoint counts once its row is committed: its directory is
        # renamed into place just before, and a kill in between resumes
        # from the one before.
        import sqlite3
        db = os.path.join(storage, "killed", "experiment.db")
        if not glob.glob(os.path.join(storage, "killed", "trials", "*", "checkpoint_000003")):
            return False
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            (latest,), = conn.execute("SELECT max(training_iteration) FROM checkpoints")
        return (latest or 0) >= 3

    while not recorded():
        assert driver.poll() is None and time.time() < deadline
        time.sleep(0.05)
    driver.send_signal(getattr(signal, signame))
    code = driver.wait()
    assert code == (0 if signame == "SIGINT" else -signal.SIGKILL)
    path = os.path.join(storage, "killed")
    assert tune.Tuner.can_restore(path)
    grid = tune.Tuner.restore(path, trainables.slow_checkpointed, param_space={},
                              run_config=train.RunConfig(verbose=0)).fit()
    result = grid[0]
    assert result.status == "TERMINATED", result.error
    assert result.metrics["step"] == 9 and result.metrics["resumed_at"] >= 3
    assert result.metrics["training_iteration"] == 10
    # The resumed rank got the config from the experiment database, NaN and -inf kept.
    assert result.metrics["clip"] == -math.inf and result.metrics["decay_is_nan"] is True


@pytest.mark.parametrize("when_asked", [False, True])
def test_pbt_exploits_python_trials(storage, when_asked):
    grid = tune.Tuner(
        trainables.pbt_member,
        param_space={"lr": tune.grid_search([1.0, 100.0]), "when_asked": when_asked},
        tune_config=tune.TuneConfig(
            metric="score", mode="max",
            scheduler=tune.schedulers.PopulationBasedTraining(
                time_attr="training_iteration", perturbation_interval=2, quantile_fraction=0.5,
                hyperparam_mutations={"lr": [50.0, 200.0]}, seed=1)),
        run_config=run_config(storage, "pbt")).fit()
    worse = next(r for r in grid if r.history[0]["score"] == 1.0)
    best = next(r for r in grid if r is not worse)
    # The worse trial took the better one's weights (checkpoint) and a mutated lr.
    assert worse.metrics["owner"] == best.trial_id
    assert worse.config["lr"] != 1.0
    if when_asked:
        # Checkpoints only where PBT may act, and there always: each pause
        # is at a checkpoint of that very iteration.
        import re
        import sqlite3
        with sqlite3.connect(os.path.join(grid.experiment_path, "experiment.db")) as db:
            (own,), = db.execute("SELECT count(*) FROM checkpoints WHERE source = 'report'")
            (bare,), = db.execute(
                "SELECT count(*) FROM results r WHERE NOT EXISTS (SELECT 1 FROM checkpoints c "
                "WHERE c.trial_id = r.trial_id AND c.training_iteration = r.training_iteration)")
            pauses = [r for (r,) in db.execute(
                "SELECT reason FROM trial_events WHERE to_status = 'PAUSED'")]
        assert own > 0 and bare > 0, (own, bare)
        assert pauses
        for reason in pauses:
            at = re.fullmatch(r"paused by scheduler at iteration (\d+) \(checkpoint (\d+)\)", reason)
            assert at and at.group(1) == at.group(2), reason


def test_trainable_found_through_a_pth_import_hook(tmp_path):
    # Ranks start without site (python3 -S): a trainable that only an import
    # hook from a .pth file finds (as editable installs do) is still found.
    user_base = tmp_path / "userbase"
    site_dir = user_base / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / \
        "site-packages"
    site_dir.mkdir(parents=True)
    (site_dir / "hooked.pth").write_text("import hook_installer; hook_installer.install()\n")
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "hooked_trainables.py").write_text(textwrap.dedent("""
        from tunerun import train
        def train_func(config):
            train.report({"value": config["x"] * 2})
    """))
    (site_dir / "hook_installer.py").write_text(textwrap.dedent(f"""
        import importlib.machinery, sys
        class Finder:
            @classmethod
            def find_spec(cls, name, path=None, target=None):
                if name == "hooked_trainables":
                    return importlib.machinery.PathFinder.find_spec(name, [{str(hidden)!r}])
        def install():
            sys.meta_path.append(Finder)
    """))
    script = tmp_path / "driver.py"
    script.write_text(textwrap.dedent("""
        from tunerun import train, tune
        from hooked_trainables import train_func
        if __name__ == "__main__":
            grid = tune.Tuner(train_func, param_space={"x": 21},
                              run_config=train.RunConfig(name="h", storage_path="runs",
                                                         verbose=0)).fit()
            print("VALUE", grid[0].metrics.get("value"), grid.errors)
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, env=dict(os.environ, PYTHONUSERBASE=str(user_base)))
    assert proc.returncode == 0, proc.stderr
    assert "VALUE 42 []" in proc.stdout
