#!/usr/bin/python3
"""How long a rank's death takes to end its group on the local Slurm cluster.

One trial of two 1-CPU ranks on two nodes (tests/slurm/local_cluster.sh);
once it has reported a few results, rank 0 is killed by SIGKILL, and the
time from the kill to the run log's "failing" line for the trial is
measured (the log is polled every 10 ms). Repeated --runs times; prints each
time and the median, with the reason the log gave.

    benchmarks/slurm_rank_death.py [--tunerun build/tunerun] [--runs 3]

Needs root and namespaces, like the cluster. Brings the cluster up and down.
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLUSTER = os.path.join(ROOT, "tests/slurm/local_cluster.sh")
SWEEP = """name = "death"
metric = "accuracy"
mode = "max"

[trainable]
builtin = "learning_curve"
num_workers = 2
cpus_per_worker = 1

[param_space]
speed = 0.1
iterations = 200
sleep_s = 0.3
checkpoint_every = 1

[failure]
max_failures = 0
"""


def rank_zero():
    """The pid of the process whose environment says it is task 0 of a tunerun step."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if b"SLURM_PROCID=0" in env and any(v.startswith(b"TUNERUN_TRIAL_ID=") for v in env):
            return int(name)
    return None


def one_run(tunerun, work):
    log_path = os.path.join(work, "tunerun.log")
    with open(log_path, "wb") as log:
        run = subprocess.Popen(
            [CLUSTER, "run", "salloc", "--nodes=2", "--exclusive", "--no-kill", "--quiet",
             tunerun, "run", "death.toml", "--storage-path", "runs", "--control-address",
             "198.18.0.1"], cwd=work, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and rank_zero() is None:
            time.sleep(0.2)
        time.sleep(3)  # a few results
        victim = rank_zero()
        if victim is None:
            return None, "no rank found"
        killed = time.time()
        os.kill(victim, signal.SIGKILL)
        while time.time() < killed + 120:
            with open(log_path, errors="replace") as f:
                for line in f:
                    if "death_00000 failing:" in line:
                        return time.time() - killed, line.split("failing:", 1)[1].strip()
            time.sleep(0.01)
        return None, "no failing line within 120 s"
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        subprocess.run([CLUSTER, "run", "scancel", "--user=root"], capture_output=True)
        time.sleep(2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tunerun", default=os.path.join(ROOT, "build/tunerun"))
    parser.add_argument("--runs", type=int, default=3)
    opts = parser.parse_args()
    subprocess.run([CLUSTER, "up"], check=True, capture_output=True)
    times = []
    try:
        for i in range(opts.runs):
            work = tempfile.mkdtemp(prefix="tunerun_death_")
            with open(os.path.join(work, "death.toml"), "w") as f:
                f.write(SWEEP)
            seconds, why = one_run(os.path.abspath(opts.tunerun), work)
            print(f"run {i + 1}: {'-' if seconds is None else f'{seconds:.2f} s'}  ({why})")
            if seconds is not None:
                times.append(seconds)
    finally:
        subprocess.run([CLUSTER, "down"], capture_output=True)
    if times:
        print(f"kill to failing, median of {len(times)}: {statistics.median(times):.2f} s")
    return 0 if len(times) == opts.runs else 1


if __name__ == "__main__":
    sys.exit(main())
