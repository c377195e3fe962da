"""Trial throughput of Python trainables: 200 trivial Python function trials
(fresh worker processes per trial, then with reuse_actors), against the same
trials of the C++ built-in `noop` through the tunerun CLI, and against
Optuna's in-memory study loop (Debian's python3-optuna), all in this run.

    PYTHONPATH=build/bindings /usr/bin/python3 benchmarks/python_trials.py [num_trials=200]

Prints ms per trial and each row's ratio to the C++ row of the same mode.
"""

import os
import subprocess
import sys
import tempfile
import time

from tunerun import train, tune

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def trivial(config):
    train.report({"value": config["x"]})


def time_tunerun(storage, trials, reuse):
    start = time.perf_counter()
    grid = tune.Tuner(trivial, param_space={"x": tune.uniform(0, 1)},
                      tune_config=tune.TuneConfig(metric="value", mode="max", num_samples=trials,
                                                  reuse_actors=reuse),
                      run_config=train.RunConfig(name=f"py_{reuse}", storage_path=storage,
                                                 verbose=0)).fit()
    elapsed = time.perf_counter() - start
    assert grid.num_terminated == trials, grid.errors
    return elapsed


def time_cli(storage, trials, reuse):
    sweep = os.path.join(storage, f"cpp_{reuse}.toml")
    with open(sweep, "w") as f:
        f.write(f'name = "cpp_{str(reuse).lower()}"\nstorage_path = "{storage}"\n'
                f'metric = "value"\nmode = "max"\nnum_samples = {trials}\n'
                f'reuse_workers = {str(reuse).lower()}\n'
                '[trainable]\nbuiltin = "noop"\n[param_space]\niterations = 1\n'
                'x = { uniform = [0, 1] }\n')
    start = time.perf_counter()
    subprocess.run([os.path.join(ROOT, "build", "tunerun"), "run", sweep, "-q"], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def time_optuna(trials):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    start = time.perf_counter()
    optuna.create_study(direction="maximize").optimize(
        lambda t: t.suggest_float("x", 0, 1), n_trials=trials)
    return time.perf_counter() - start


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    with tempfile.TemporaryDirectory() as storage:
        rows = []
        for reuse in (False, True):
            cpp = time_cli(storage, trials, reuse)
            py = time_tunerun(storage, trials, reuse)
            mode = "reuse" if reuse else "fresh"
            rows.append((f"C++ noop, {mode}", cpp, 1.0))
            rows.append((f"Python function, {mode}", py, py / cpp))
        try:
            optuna_s = time_optuna(trials)
            rows.append(("Optuna in-memory study loop", optuna_s, None))
        except ImportError:
            print("(python3-optuna not installed: no Optuna row)")
    print(f"{trials} trivial trials, 2-core machine shared with other builds")
    for name, seconds, ratio in rows:
        versus = f"x{ratio:.2f} of C++" if ratio is not None else ""
        print(f"{name:32s} {1000 * seconds / trials:8.2f} ms/trial   {versus}")


if __name__ == "__main__":
    main()
