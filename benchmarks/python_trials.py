"""Trial throughput of Python trainables: 200 trivial Python function trials
(fresh worker processes per trial, forked from the zygote and, as before it,
each started by exec (TUNERUN_ZYGOTE=0); then with reuse_actors), against the same
trials of the C++ built-in `noop` through the tunerun CLI, and against
Optuna's in-memory study loop (Debian's python3-optuna), all in this run.

    PYTHONPATH=build/bindings /usr/bin/python3 benchmarks/python_trials.py [num_trials=200]

Prints wall and CPU ms per trial (CPU: user+sys of this process and its
children, the ranks and the CLI: less skewed by a shared machine's load than
wall time) and each row's ratios to the C++ row of the same mode.
"""

import os
import sys
import time

from tunerun import train, tune

# `trivial` reaches the ranks by value (cloudpickle): a rank imports what it
# uses (tunerun.train), never this script.

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def trivial(config):
    train.report({"value": config["x"]})


def cpu_seconds():
    import resource
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def measured(run, *args):
    """(wall seconds, CPU seconds) of run(*args)."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    run(*args)
    return time.perf_counter() - wall, cpu_seconds() - cpu


def time_tunerun(storage, trials, reuse, zygote=True):
    os.environ["TUNERUN_ZYGOTE"] = "1" if zygote else "0"
    grid = tune.Tuner(trivial, param_space={"x": tune.uniform(0, 1)},
                      tune_config=tune.TuneConfig(metric="value", mode="max", num_samples=trials,
                                                  reuse_actors=reuse),
                      run_config=train.RunConfig(name=f"py_{reuse}_{zygote}",
                                                 storage_path=storage, verbose=0)).fit()
    assert grid.num_terminated == trials, grid.errors


def time_cli(storage, trials, reuse):
    import subprocess
    sweep = os.path.join(storage, f"cpp_{reuse}.toml")
    with open(sweep, "w") as f:
        f.write(f'name = "cpp_{str(reuse).lower()}"\nstorage_path = "{storage}"\n'
                f'metric = "value"\nmode = "max"\nnum_samples = {trials}\n'
                f'reuse_workers = {str(reuse).lower()}\n'
                '[trainable]\nbuiltin = "noop"\n[param_space]\niterations = 1\n'
                'x = { uniform = [0, 1] }\n')
    subprocess.run([os.path.join(ROOT, "build", "tunerun"), "run", sweep, "-q"], check=True,
                   stdout=subprocess.DEVNULL)


def time_optuna(trials):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    optuna.create_study(direction="maximize").optimize(
        lambda t: t.suggest_float("x", 0, 1), n_trials=trials)


def main():
    import tempfile
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    with tempfile.TemporaryDirectory() as storage:
        rows = []
        for reuse in (False, True):
            cpp = measured(time_cli, storage, trials, reuse)
            py = measured(time_tunerun, storage, trials, reuse)
            mode = "reuse" if reuse else "fresh"
            rows.append((f"C++ noop, {mode}", cpp, cpp))
            rows.append((f"Python function, {mode}", py, cpp))
            if not reuse:
                exec_rows = measured(time_tunerun, storage, trials, reuse, False)
                rows.append(("Python function, fresh, by exec", exec_rows, cpp))
        try:
            rows.append(("Optuna in-memory study loop", measured(time_optuna, trials), None))
        except ImportError:
            print("(python3-optuna not installed: no Optuna row)")
    print(f"{trials} trivial trials, 2-core machine shared with other builds")
    print(f"{'':32s} {'wall ms/trial':>14s} {'CPU ms/trial':>13s}   ratios to C++ (wall, CPU)")
    for name, (wall, cpu), anchor in rows:
        versus = f"x{wall / anchor[0]:.2f}, x{cpu / anchor[1]:.2f}" if anchor else ""
        print(f"{name:32s} {1000 * wall / trials:14.2f} {1000 * cpu / trials:13.2f}   {versus}")


if __name__ == "__main__":
    main()
