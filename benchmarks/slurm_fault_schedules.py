#!/usr/bin/python3
"""Fixed fault schedules on the local Slurm cluster, each in one allocation.

Six two-rank trials (a CPU per rank, a checkpoint every iteration) on three
2-CPU nodes, under `salloc -N 3 --exclusive --no-kill`, whose shell resumes
the sweep when the controller is killed: the allocation must survive.

    crash-then-kill    a node crashes; 8 s later the controller is killed by
                       SIGKILL and resumed in the same allocation
    revive-after-down  a node crashes and comes back 0.25 s after Slurm
                       reports it down
    two-nodes          two nodes crash at once, and come back 20 s later
    spread-then-kill   as crash-then-kill, with SPREAD trials of two 2-CPU
                       ranks (each trial on two nodes)

Afterwards every trial must be TERMINATED in that one allocation, every
iteration recorded once, and no node retired but the ones that crashed.

    benchmarks/slurm_fault_schedules.py [--build build] [--schedules a,b]
        [--slurmd-timeout 5]

Needs root and namespaces, like the cluster. Exit status 0 when every
schedule passes.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from slurm_soak import CLUSTER, cluster  # noqa: E402
from soak_processes import db_rows, process_of  # noqa: E402

SCHEDULES = ["crash-then-kill", "revive-after-down", "two-nodes", "spread-then-kill"]

SWEEP = """name = "faults"
metric = "accuracy"
mode = "max"

[trainable]
builtin = "learning_curve"
num_workers = 2
{resources}

[param_space]
speed = {{ grid_search = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3] }}
iterations = 60
sleep_s = 0.5
checkpoint_every = 1

[failure]
max_failures = 0
"""


def node_down(node):
    state = cluster("run", "sinfo", "-h", "-N", "-n", node, "-o", "%T", check=False).stdout
    return "down" in state or "fail" in state


def run_schedule(schedule, binary):
    work = tempfile.mkdtemp(prefix=f"tunerun_faults_{schedule}_")
    spread = schedule == "spread-then-kill"
    resources = ('cpus_per_worker = 2\nplacement_strategy = "SPREAD"' if spread
                 else "cpus_per_worker = 1")
    with open(os.path.join(work, "faults.toml"), "w") as f:
        f.write(SWEEP.format(resources=resources))
    db = os.path.join(work, "runs/faults/experiment.db")
    # The controller killed by SIGKILL (137) is resumed in the same allocation.
    script = (f"'{binary}' run faults.toml --storage-path runs --control-address 198.18.0.1 -q; "
              f"rc=$?; while [ $rc -eq 137 ]; do '{binary}' resume runs/faults -q; rc=$?; "
              "done; exit $rc")
    cluster("up")
    started = time.time()
    with open(os.path.join(work, "tunerun.log"), "wb") as log:
        salloc = subprocess.Popen([CLUSTER, "run", "salloc", "-N", "3", "--exclusive",
                                   "--no-kill", "--quiet", "sh", "-c", script], cwd=work,
                                  stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    crashed = []
    try:
        while not db_rows(db, "SELECT count(*) FROM results") or \
                db_rows(db, "SELECT count(*) FROM results")[0][0] < 20:
            time.sleep(0.2)
        hosts = [h for (h,) in db_rows(db, "SELECT DISTINCT host FROM placements WHERE "
                                           "trial_id IN (SELECT trial_id FROM results)")]
        if schedule == "two-nodes":
            crashed = ["n1", "n3"]
            for node in crashed:
                cluster("crash", node)
            time.sleep(20)
            for node in crashed:
                cluster("revive", node)
        else:
            crashed = [hosts[0] if hosts else "n2"]
            cluster("crash", crashed[0])
            if schedule == "revive-after-down":
                while not node_down(crashed[0]):
                    time.sleep(0.05)
                time.sleep(0.25)
                cluster("revive", crashed[0])
            else:
                time.sleep(8)
                pid = process_of(binary)
                if pid:
                    os.kill(pid, signal.SIGKILL)
                time.sleep(20)
                cluster("revive", crashed[0])
        salloc.wait(timeout=400)
    except subprocess.TimeoutExpired:
        os.killpg(salloc.pid, signal.SIGKILL)
    finally:
        steps = cluster("run", "squeue", "-h", "-s", check=False).stdout.strip()
        cluster("down", check=False)
    trials = db_rows(db, "SELECT status, count(*) FROM trials GROUP BY status")
    counts = db_rows(db, "SELECT count(*), count(DISTINCT trial_id || '/' || training_iteration) "
                         "FROM results")
    nodes = db_rows(db, "SELECT value FROM experiment_state WHERE key = 'nodes'")
    retired = sorted(n["name"] for n in json.loads(nodes[0][0]) if nodes and
                     n.get("health") == "retired") if nodes else []
    terminated = dict(trials).get("TERMINATED", 0)
    results, distinct = counts[0] if counts else (0, 0)
    ok = (salloc.returncode == 0 and terminated == 6 and results == distinct == 6 * 60
          and set(retired) <= set(crashed) and not steps)
    print(f"{schedule:<18} {salloc.returncode:>4} {terminated:>10} {6 * 60 - distinct:>5} "
          f"{results - distinct:>5} {','.join(crashed):>8} {','.join(retired) or '-':>8} "
          f"{time.time() - started:>7.1f}  {'PASS' if ok else 'FAIL'}  {work}", flush=True)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(os.path.dirname(CLUSTER), "../../build"))
    parser.add_argument("--schedules", default=",".join(SCHEDULES))
    parser.add_argument("--slurmd-timeout", default="5")
    opts = parser.parse_args()
    binary = os.path.join(os.path.abspath(opts.build), "tunerun")
    os.environ.update(TUNERUN_SLURM_NODES="3", TUNERUN_SLURM_CPUS="2",
                      TUNERUN_SLURMD_TIMEOUT=opts.slurmd_timeout)
    print(f"{'schedule':<18} {'exit':>4} {'TERMINATED':>10} {'lost':>5} {'dup':>5} "
          f"{'crashed':>8} {'retired':>8} {'wall s':>7}")
    ok = [run_schedule(s, binary) for s in opts.schedules.split(",")]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
