"""Trainables travel to the trial's processes by value (cloudpickle), so a
script written as Ray's docs write it runs as it does with Ray: a function
defined twice or after an earlier fit(), closures, lambdas, functools.partial,
with_resources reassigned to the same name, globals set under the main guard.
The script's top level runs once, in the driver."""

import os
import pickle
import subprocess
import sys
import textwrap

import pytest

from tunerun import train, tune

import trainables


def run_script(tmp_path, source, **env):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=240, env={**os.environ, **env})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def printed(stdout, key):
    """The values the script printed as `key value` lines."""
    return [line.split(" ", 1)[1] for line in stdout.splitlines() if line.startswith(key + " ")]


@pytest.mark.parametrize("zygote", ["1", "0"])
def test_a_script_as_rays_docs_write_it_section_by_section(tmp_path, zygote):
    out = run_script(tmp_path, """
        from tunerun import tune, train

        with open("top_level_runs.txt", "a") as f:  # a side effect of the script's top level
            f.write("ran\\n")

        def train_func(config):
            train.report({"version": 1, "x": config["x"]})

        results = tune.Tuner(train_func, param_space={"x": tune.grid_search([1, 2])},
                             run_config=train.RunConfig(storage_path="runs", verbose=0)).fit()
        print("first", sorted((r.metrics["version"], r.metrics["x"]) for r in results))

        # The same name again, as the next section of the docs defines it.
        def train_func(config):
            train.report({"version": 2, "x": config["x"]})

        # Defined after the first fit().
        def objective(config):
            return {"score": config["x"] * 10}

        results = tune.Tuner(train_func, param_space={"x": 3},
                             run_config=train.RunConfig(storage_path="runs", verbose=0)).fit()
        print("second", results[0].metrics["version"], results[0].metrics["x"])
        results = tune.Tuner(objective, param_space={"x": 4},
                             run_config=train.RunConfig(storage_path="runs", verbose=0)).fit()
        print("third", results[0].metrics["score"])
    """, TUNERUN_ZYGOTE=zygote)
    assert printed(out, "first") == ["[(1, 1), (1, 2)]"]
    assert printed(out, "second") == ["2 3"]
    assert printed(out, "third") == ["40"]
    assert (tmp_path / "top_level_runs.txt").read_text() == "ran\n"


def test_closures_lambdas_partials_and_globals_under_the_main_guard(tmp_path):
    out = run_script(tmp_path, """
        import functools
        import os
        from tunerun import tune, train

        def train_cifar(config, data_dir=None):
            train.report({"loss": config["lr"], "found": int(os.path.isdir(data_dir))})

        def make_objective(offset):
            def objective(config):
                train.report({"score": config["x"] + offset})
            return objective

        if __name__ == "__main__":
            SCALE = 3

            def scaled(config):
                train.report({"score": config["x"] * SCALE})

            data_dir = os.path.abspath("./data")
            os.makedirs(data_dir, exist_ok=True)
            run = train.RunConfig(storage_path="runs", verbose=0)
            for name, trainable in [
                    ("partial", functools.partial(train_cifar, data_dir=data_dir)),
                    ("closure", make_objective(100)),
                    ("lambda", lambda config: {"score": -config["x"]}),
                    ("guarded", scaled)]:
                grid = tune.Tuner(trainable, param_space={"x": 2, "lr": 0.5},
                                  run_config=run).fit()
                assert not grid.errors, grid.errors
                print(name, {k: v for k, v in sorted(grid[0].metrics.items())
                             if k in ("loss", "found", "score")})
    """)
    assert printed(out, "partial") == ["{'found': 1, 'loss': 0.5}"]
    assert printed(out, "closure") == ["{'score': 102}"]
    assert printed(out, "lambda") == ["{'score': -2}"]
    assert printed(out, "guarded") == ["{'score': 6}"]


def test_with_resources_reassigned_to_the_functions_name(tmp_path):
    # Ray's resources guide: `trainable = tune.with_resources(trainable, {...})`.
    out = run_script(tmp_path, """
        import functools
        from tunerun import tune, train

        def trainable(config, data_dir=None):
            train.report({"score": config["x"], "dir": int(data_dir == "/data")})

        trainable = tune.with_resources(trainable, {"cpu": 1})
        grid = tune.Tuner(trainable, param_space={"x": tune.grid_search([1, 2])},
                          run_config=train.RunConfig(storage_path="runs", verbose=0)).fit()
        print("plain", sorted(r.status for r in grid), sorted(r.metrics["score"] for r in grid))

        # PyTorch's hyperparameter tutorial: with_resources over a partial.
        grid = tune.Tuner(tune.with_resources(functools.partial(trainable, data_dir="/data"),
                                              resources={"cpu": 1, "gpu": 0}),
                          param_space={"x": 5},
                          run_config=train.RunConfig(storage_path="runs", verbose=0)).fit()
        print("partial", grid[0].status, grid[0].metrics["dir"])
    """)
    assert printed(out, "plain") == ["['TERMINATED', 'TERMINATED'] [1, 2]"]
    assert printed(out, "partial") == ["TERMINATED 1"]


def test_a_script_class_trainable_and_wrappers_nested_inside_callables(tmp_path):
    out = run_script(tmp_path, """
        import functools
        from tunerun import tune, train

        def first(config):
            train.report({"x": 1})

        tune.Tuner(first, run_config=train.RunConfig(storage_path="runs", verbose=0)).fit()

        class Counter(tune.Trainable):  # defined after a fit()
            def setup(self, config, start=0):
                self.count = start

            def step(self):
                self.count += self.config["step"]
                return {"count": self.count, "done": self.count >= 10 + self.config["step"]}

        grid = tune.Tuner(tune.with_parameters(Counter, start=10), param_space={"step": 2},
                          run_config=train.RunConfig(storage_path="runs", verbose=0)).fit()
        print("class", grid[0].metrics["count"], grid[0].metrics["training_iteration"])

        def add(config, a=0, b=0, c=0):
            train.report({"sum": a + b + c})

        # with_parameters inside with_parameters, and one inside a partial.
        inner = tune.with_parameters(tune.with_parameters(add, a=1, b=1), b=2)
        grid = tune.Tuner(tune.with_resources(inner, {"cpu": 1}),
                          run_config=train.RunConfig(storage_path="runs", verbose=0)).fit()
        print("nested", grid[0].metrics["sum"])
        deep = functools.partial(tune.with_parameters(add, a=5), c=7)
        grid = tune.Tuner(deep, run_config=train.RunConfig(storage_path="runs", verbose=0)).fit()
        print("deep", grid[0].metrics["sum"])
    """)
    assert printed(out, "class") == ["12 1"]
    assert printed(out, "nested") == ["3"]
    assert printed(out, "deep") == ["12"]


def test_functions_of_importable_modules_go_by_reference_on_the_drivers_sys_path(tmp_path):
    # The module lives where only the driver's sys.path.insert finds it.
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "mymodels.py").write_text(textwrap.dedent("""
        import os
        from tunerun import train

        def objective(config):
            train.report({"score": config["x"], "pid": os.getpid()})
    """))
    out = run_script(tmp_path, """
        import os, sys
        sys.path.insert(0, os.path.abspath("lib"))
        import mymodels
        from tunerun import tune, train

        grid = tune.Tuner(mymodels.objective, param_space={"x": 7},
                          run_config=train.RunConfig(name="lib", storage_path="runs",
                                                     verbose=0)).fit()
        print("score", grid[0].metrics["score"], grid[0].metrics["pid"] != os.getpid())
    """)
    assert printed(out, "score") == ["7 True"]
    # By reference: the pickle names the module, it does not hold the function's code.
    with open(tmp_path / "runs" / "lib" / "trainable.pkl", "rb") as f:
        data = f.read()
    assert b"mymodels" in data and b"objective" in data and len(data) < 200


def test_a_module_the_rank_cannot_import_fails_its_trials_with_the_error(tmp_path):
    out = run_script(tmp_path, """
        import os, shutil, sys
        os.makedirs("gone", exist_ok=True)
        with open("gone/vanishing.py", "w") as f:
            f.write("from tunerun import train\\n"
                    "def objective(config):\\n    train.report({'x': 1})\\n")
        sys.path.insert(0, os.path.abspath("gone"))
        import vanishing
        from tunerun import tune, train

        shutil.rmtree("gone")  # the ranks cannot import it any more
        grid = tune.Tuner(vanishing.objective, run_config=train.RunConfig(
            storage_path="runs", verbose=0)).fit()
        print("error", grid[0].status, grid.errors[0])
    """)
    (line,) = printed(out, "error")
    assert line.startswith("ERROR") and "ModuleNotFoundError" in line and "vanishing" in line


def test_with_parameters_values_are_written_once_not_inside_the_trainable(storage):
    table = trainables.Table(list(range(100_000)))
    grid = tune.Tuner(tune.with_parameters(trainables.with_table, table=table, scale=2),
                      param_space={"x": tune.grid_search([1, 2, 3])},
                      run_config=train.RunConfig(name="big", storage_path=storage,
                                                 verbose=0)).fit()
    assert not grid.errors
    experiment = os.path.join(storage, "big")
    assert os.path.getsize(os.path.join(experiment, "with_parameters.pkl")) > 100_000
    assert os.path.getsize(os.path.join(experiment, "trainable.pkl")) < 1000


def test_what_cannot_be_pickled_is_refused_before_anything_runs(storage):
    import threading
    lock = threading.Lock()
    with pytest.raises(ValueError, match="with_parameters: the parameters cannot be pickled"):
        tune.with_parameters(trainables.with_table, table=lock)

    def holds_a_lock(config):
        with lock:
            pass
    tuner = tune.Tuner(holds_a_lock, run_config=train.RunConfig(name="lock", storage_path=storage,
                                                                  verbose=0))
    with pytest.raises(ValueError, match="the trainable holds_a_lock cannot be pickled"):
        tuner.fit()
    assert not os.path.exists(storage)


def test_restore_runs_the_script_trainable_it_is_given_again(tmp_path):
    out = run_script(tmp_path, """
        import os
        from tunerun import tune, train

        def flaky(config):
            if not os.path.exists("second_run"):
                raise RuntimeError("first run fails")
            train.report({"y": config["x"] * 2})

        if __name__ == "__main__":
            space = {"x": tune.sample_from(lambda spec: 21)}  # kept by the first fit()
            grid = tune.Tuner(flaky, param_space=space, run_config=train.RunConfig(
                name="r", storage_path="runs", verbose=0)).fit()
            print("first", grid[0].status)
            open("second_run", "w").close()
            grid = tune.Tuner.restore(os.path.abspath("runs/r"), flaky,
                                      resume_errored=True).fit()
            print("restored", grid[0].status, grid[0].metrics.get("y"))
    """)
    assert printed(out, "first") == ["ERROR"]
    assert printed(out, "restored") == ["TERMINATED 42"]


def test_the_experiment_keeps_its_trainable(storage):
    tune.Tuner(trainables.quadratic, param_space={"x": 1, "steps": 1},
               run_config=train.RunConfig(name="kept", storage_path=storage, verbose=0)).fit()
    with open(os.path.join(storage, "kept", "trainable.pkl"), "rb") as f:
        assert pickle.load(f) is trainables.quadratic
