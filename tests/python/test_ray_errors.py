"""Ray's error behaviour for a trainable the trial's process cannot load:
the trial fails with the Python error that loading it raised (Ray shows the
exception), not with a bare exit code."""

import subprocess
import sys
import textwrap


def test_an_unresolvable_trainable_fails_its_trial_with_the_error(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        from tunerun import train, tune

        class Unpicklable:  # the trial's process cannot build it again
            def __reduce__(self):
                return (eval, ("undefined_name",))

        thing = Unpicklable()

        def train_func(config):
            train.report({"x": thing is not None})

        grid = tune.Tuner(train_func, run_config=tune.RunConfig(
            name="e", storage_path="runs", verbose=0)).fit()
        print("TRIAL ERROR:", grid.errors[0])
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.startswith("TRIAL ERROR:"))
    assert "NameError" in line and "undefined_name" in line
    assert "exited with code" not in line
