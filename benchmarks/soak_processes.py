"""What the cluster soaks and fault benchmarks read of this machine: the
processes of a sweep (by their environment), the controller (by its
program) and the experiment's rows (read-only, through any lock).

Imported by slurm_soak.py, ssh_soak.py, slurm_rank_death.py and
slurm_fault_schedules.py, which run from this folder.
"""
import os
import sqlite3


def _proc_files(name):
    """(pid, bytes of /proc/PID/NAME) for every process this user may read."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/{name}", "rb") as f:
                yield int(pid), f.read()
        except OSError:
            continue


def processes_with_env(*needles):
    """Pids of processes whose environment holds every needle."""
    return [pid for pid, env in _proc_files("environ")
            if all(n.encode() in env for n in needles)]


def process_of(binary):
    """The pid of a process running `binary` (argv[0]); None when none does."""
    for pid, cmdline in _proc_files("cmdline"):
        if cmdline.split(b"\0")[0] == binary.encode():
            return pid
    return None


def db_rows(db, sql):
    """`sql`'s rows from the SQLite file `db`; [] while it cannot be read."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
            return con.execute(sql).fetchall()
    except sqlite3.Error:
        return []
