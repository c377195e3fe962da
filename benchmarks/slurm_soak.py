#!/usr/bin/python3
"""Fault soak on the local Slurm cluster (tests/slurm/local_cluster.sh).

A sweep of TRIALS two-rank trials on three 2-CPU nodes, checkpointing every
iteration, while random faults hit it: a node's slurmd, stepds and tasks
killed (`local_cluster.sh crash`, the node revived a few seconds later),
two nodes crashed at once, a rank killed by SIGKILL, the controller killed
by SIGKILL (resumed in a new allocation), the allocation's time limit
brought within two minutes (`scontrol update TimeLimit`: the controller
pauses every trial and exits 130) and the allocation revoked (`scancel`:
likewise); after a pause the sweep is resumed in a new allocation. Afterwards it checks what a user would: every trial
TERMINATED, every iteration recorded exactly once (none lost, none
duplicated), no task of the sweep left running and no job step left in
Slurm; and it prints a table of the faults, how many the sweep recovered
from, and the time from each fault to its trials' next result.

    benchmarks/slurm_soak.py [--build build] [--faults 20] [--seed 1] [--elastic]

--elastic makes the trials elastic (num_workers = [1, 2], a rank per node:
cpus_per_worker = 2): a trial spans two nodes when it can, shrinks to one
when a node of it is lost, and grows back at a checkpoint when a node is
free and no trial waits. The summary says how many trials ran at both sizes
(each result records its world_size).

Needs root and namespaces, like the cluster; takes a few minutes. Exit
status 0 when every check holds.
"""
import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soak_processes import db_rows, process_of, processes_with_env  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLUSTER = os.path.join(ROOT, "tests/slurm/local_cluster.sh")
NODES = ["n1", "n2", "n3"]
KINDS = ["node", "two nodes", "rank", "controller", "time limit", "revoke"]

SWEEP = """name = "soak"
metric = "accuracy"
mode = "max"

[trainable]
builtin = "learning_curve"
num_workers = {workers}
cpus_per_worker = {cpus}

[param_space]
speed = {{ grid_search = [{speeds}] }}
iterations = {iterations}
sleep_s = 0.5
checkpoint_every = 1

[failure]
max_failures = {max_failures}
"""


def cluster(*args, check=True):
    return subprocess.run([CLUSTER, *args], check=check, capture_output=True, text=True)


class Controller:
    """One life of the controller: `tunerun run|resume` in an allocation of its own."""

    def __init__(self, binary, work, args, log):
        self.started = time.time()
        command = [CLUSTER, "run", "salloc", "--nodes=2-3", "--exclusive", "--no-kill", "--quiet",
                   binary, *args, "--control-address", "198.18.0.1", "-q"]
        self.process = subprocess.Popen(command, cwd=work, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        self.binary = binary

    def pid(self):
        """The tunerun process itself (salloc's child)."""
        return process_of(self.binary)

    def running(self):
        return self.process.poll() is None

    def job_id(self):
        """The allocation the controller runs in, from its environment."""
        pid = self.pid()
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                for var in f.read().split(b"\0"):
                    if var.startswith(b"SLURM_JOB_ID="):
                        return var.split(b"=", 1)[1].decode()
        except (OSError, TypeError):
            pass
        return None


def minutes(text):
    """squeue's %M ("1:02", "1:02:03", "1-01:02:03") in whole minutes, rounded up."""
    days, _, clock = text.rpartition("-")
    seconds = 0
    for part in clock.split(":"):
        seconds = seconds * 60 + int(part)
    return int(days or 0) * 1440 + (seconds + 59) // 60


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--faults", type=int, default=20)
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=80)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--elastic", action="store_true")
    opts = parser.parse_args()
    rng = random.Random(opts.seed)
    binary = os.path.join(os.path.abspath(opts.build), "tunerun")
    work = tempfile.mkdtemp(prefix="tunerun_soak_")
    speeds = ", ".join(f"{0.05 * (i + 1):.2f}" for i in range(opts.trials))
    with open(os.path.join(work, "soak.toml"), "w") as f:
        f.write(SWEEP.format(speeds=speeds, iterations=opts.iterations,
                             max_failures=opts.faults + 1,
                             workers="[1, 2]" if opts.elastic else "2",
                             cpus=2 if opts.elastic else 1))
    db = os.path.join(work, "runs/soak/experiment.db")
    log = open(os.path.join(work, "tunerun.log"), "ab")
    os.environ["TUNERUN_SLURM_NODES"] = "3"
    os.environ["TUNERUN_SLURM_CPUS"] = "2"
    cluster("up")
    faults = []  # (kind, time, detail)
    down = {}  # node -> when to revive it
    orphans_seen = 0
    lives = 1
    controller = Controller(binary, work, ["run", "soak.toml", "--storage-path", "runs"], log)
    deadline = time.time() + 900
    try:
        while time.time() < deadline:
            now = time.time()
            for node, at in list(down.items()):
                if now >= at:
                    cluster("revive", node)
                    del down[node]
            if not controller.running():
                finished = db_rows(db, "SELECT count(*) FROM trials WHERE status IN "
                                       "('TERMINATED', 'ERROR')")
                if finished and finished[0][0] == opts.trials and not down:
                    break
                # Stopped with work left (paused at the allocation's end, or no
                # node could hold a trial): once more, in a new allocation.
                time.sleep(2)
                controller = Controller(binary, work, ["resume", "runs/soak"], log)
                lives += 1
                continue
            if len(faults) >= opts.faults or not db_rows(db, "SELECT count(*) FROM results"):
                time.sleep(0.5)
                continue
            time.sleep(rng.uniform(3, 6))
            if not controller.running():
                continue
            kind = rng.choices(KINDS, weights=[4, 1, 4, 2, 1, 1])[0]
            if kind == "two nodes":
                up = [n for n in NODES if n not in down]
                if len(up) < 3:
                    continue
                pair = rng.sample(up, 2)
                for node in pair:
                    cluster("crash", node)
                    down[node] = time.time() + rng.uniform(4, 12)
                faults.append(("two nodes", time.time(), ",".join(pair)))
            elif kind in ("time limit", "revoke"):
                job = controller.job_id()
                if job is None:
                    continue
                if kind == "revoke":
                    cluster("run", "scancel", job, check=False)
                else:
                    used = cluster("run", "squeue", "-h", "-j", job, "-o", "%M",
                                   check=False).stdout.strip()
                    if not used:
                        continue
                    # At most two minutes left: within the controller's end_margin_s.
                    cluster("run", "scontrol", "update", f"JobId={job}",
                            f"TimeLimit={minutes(used) + 1}", check=False)
                faults.append((kind, time.time(), job))
            elif kind == "node":
                up = [n for n in NODES if n not in down]
                if len(up) < 2:
                    continue
                node = rng.choice(up)
                cluster("crash", node)
                down[node] = time.time() + rng.uniform(4, 12)
                faults.append(("node", time.time(), node))
            elif kind == "rank":
                tasks = processes_with_env("TUNERUN_TRIAL_ID=soak_", "SLURM_STEP_ID=")
                if not tasks:
                    continue
                victim = rng.choice(tasks)
                try:
                    with open(f"/proc/{victim}/environ", "rb") as f:
                        env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
                    os.kill(victim, signal.SIGKILL)
                except (OSError, ValueError):
                    continue
                faults.append(("rank", time.time(), env.get(b"TUNERUN_TRIAL_ID", b"").decode()))
            else:
                pid = controller.pid()
                if pid is None:
                    continue
                os.kill(pid, signal.SIGKILL)
                faults.append(("controller", time.time(), ""))
                controller.process.wait()
                # Its tasks die with it (srun under pdeathsig): none may stay.
                end = time.time() + 15
                while processes_with_env("TUNERUN_TRIAL_ID=soak_") and time.time() < end:
                    time.sleep(0.2)
                orphans_seen += len(processes_with_env("TUNERUN_TRIAL_ID=soak_"))
                controller = Controller(binary, work, ["resume", "runs/soak"], log)
                lives += 1
        else:
            print("soak: did not finish in 15 minutes", file=sys.stderr)
        for node in list(down):
            cluster("revive", node)
        time.sleep(3)
        orphans_end = len(processes_with_env("TUNERUN_TRIAL_ID=soak_"))
        steps = cluster("run", "squeue", "-h", "-s", check=False).stdout.strip()
    finally:
        if controller.running():
            os.killpg(controller.process.pid, signal.SIGKILL)
        cluster("down", check=False)
        log.close()

    trials = db_rows(db, "SELECT trial_id, status, num_failures FROM trials")
    counts = {t: (n, d, m) for t, n, d, m in db_rows(
        db, "SELECT trial_id, count(*), count(DISTINCT training_iteration), "
            "max(training_iteration) FROM results GROUP BY trial_id")}
    lost = sum(opts.iterations - counts.get(t, (0, 0, 0))[1] for t, _, _ in trials)
    duplicated = sum(n - d for n, d, _ in counts.values())
    terminated = sum(1 for _, s, _ in trials if s == "TERMINATED")
    sizes = {}  # trial -> the world sizes its results were computed with
    for trial, size in db_rows(db, "SELECT trial_id, json_extract(metrics, '$.world_size') "
                                   "FROM results WHERE json_extract(metrics, '$.world_size') "
                                   "IS NOT NULL"):
        sizes.setdefault(trial, set()).add(size)
    results = db_rows(db, "SELECT trial_id, timestamp FROM results ORDER BY timestamp")
    placements = db_rows(db, "SELECT trial_id, host, at FROM placements ORDER BY id")

    def recovery(kind, at, detail):
        """The trials a fault hit (running then: a result in the 5 s before it), and the
        seconds from the fault to each one's next result."""
        running = {t for t, when in results if at - 5 <= when <= at}
        if kind in ("node", "two nodes"):
            latest = {}
            for trial, host, when in placements:
                if when <= at:
                    latest.setdefault(trial, {})[host] = when
            hit = {t for t, hosts in latest.items() for node in detail.split(",")
                   if hosts.get(node) == max(hosts.values()) and t in running}
        elif kind == "rank":
            hit = {detail} & running
        else:
            hit = running
        times = []
        for trial in hit:
            after = [when for t, when in results if t == trial and when > at]
            if after:
                times.append(after[0] - at)
        return hit, times

    print(f"\nsoak ({'elastic [1, 2]' if opts.elastic else 'fixed 2'}-rank trials): "
          f"{opts.trials} trials x {opts.iterations} iterations, {len(faults)} faults, "
          f"{lives} controller lives, work dir {work}")
    print(f"{'fault':<12} {'count':>5} {'trials hit':>10} {'recovered':>9} "
          f"{'median s':>9} {'max s':>7}")
    ok = True
    for kind in KINDS:
        mine = [f for f in faults if f[0] == kind]
        hit_all, times = 0, []
        for f in mine:
            hit, t = recovery(*f)
            hit_all += len(hit)
            times += t
        print(f"{kind:<12} {len(mine):>5} {hit_all:>10} {len(times):>9} "
              f"{statistics.median(times) if times else 0:>9.1f} {max(times, default=0):>7.1f}")
    failures = sum(f for _, _, f in trials)
    if opts.elastic:
        print(f"elastic: {sum(1 for s in sizes.values() if s == {1, 2})} trials ran at world "
              f"size 1 and 2, {sum(1 for s in sizes.values() if s == {1})} at 1 only, "
              f"{sum(1 for s in sizes.values() if s == {2})} at 2 only")
    print(f"trials TERMINATED {terminated}/{opts.trials}; results lost {lost}, duplicated "
          f"{duplicated}; failures counted {failures} (rank kills {sum(1 for f in faults if f[0] == 'rank')}); "
          f"orphan tasks after controller kills {orphans_seen}, at the end {orphans_end}; "
          f"job steps left {'none' if not steps else steps}")
    ok = terminated == opts.trials and lost == 0 and duplicated == 0 and orphans_seen == 0 \
        and orphans_end == 0 and not steps and len(faults) >= opts.faults
    print("soak:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
