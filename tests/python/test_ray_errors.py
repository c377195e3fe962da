"""Ray's error behaviour for a trainable the trial's process cannot find: the
trial fails with the Python error that resolving it raised (Ray shows the
exception), not with a bare exit code."""

import subprocess
import sys
import textwrap


def test_an_unresolvable_trainable_fails_its_trial_with_the_error(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        from tunerun import _tunerun, train, tune

        def train_func(config):
            train.report({"x": 1})

        if _tunerun.is_worker():  # the trial's process loses it
            del train_func

        grid = tune.Tuner(train_func, run_config=tune.RunConfig(
            name="e", storage_path="runs", verbose=0)).fit()
        print("TRIAL ERROR:", grid.errors[0])
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.startswith("TRIAL ERROR:"))
    assert "NameError" in line and "train_func" in line
    assert "exited with code" not in line


def test_a_trainable_defined_twice_is_refused_before_anything_runs(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        from tunerun import train, tune

        def train_func(config):
            train.report({"version": 1})

        tuner = tune.Tuner(train_func, run_config=tune.RunConfig(
            name="e", storage_path="runs", verbose=0))

        def train_func(config):
            train.report({"version": 2})

        tuner.fit()
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode != 0
    assert "train_func is defined more than once" in proc.stderr
    assert "lines 4, 10" in proc.stderr
    assert not (tmp_path / "runs").exists()
