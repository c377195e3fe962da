"""Fresh Python ranks forked from the zygote (tunerun/_zygote.py,
tune/launch/local/zygote.h): they are the driver's children with their own process
group, environment, working directory and log, exit statuses are seen, a
dead zygote means exec, and the driver's own children are left alone."""

import os
import subprocess

import pytest

from tunerun import train, tune

import trainables


def fit(storage, name, param_space, **tune_config):
    return tune.Tuner(trainables.where_am_i, param_space=param_space,
                      tune_config=tune.TuneConfig(**tune_config),
                      run_config=train.RunConfig(name=name, storage_path=storage, verbose=0)).fit()


def zombies_of(pid):
    """Zombie processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def is_child_subreaper():
    import ctypes
    flag = ctypes.c_int(-1)
    PR_GET_CHILD_SUBREAPER = 37
    ctypes.CDLL(None).prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
    return flag.value != 0


@pytest.mark.parametrize("zygote", ["1", "0"])
def test_a_rank_is_the_drivers_child_either_way(storage, monkeypatch, zygote):
    monkeypatch.setenv("TUNERUN_ZYGOTE", zygote)
    monkeypatch.setenv("RANK_TEST_MARK", "seen")
    grid = fit(storage, "where", {"i": tune.grid_search([0, 1, 2])})
    assert [r.status for r in grid] == ["TERMINATED"] * 3
    for r in grid:
        m = r.metrics
        assert m["forked"] is (zygote == "1")
        assert m["ppid"] == os.getpid()
        assert m["pgid"] == m["pid"]  # each trial's group, led by its rank 0
        assert m["cwd"] == os.getcwd()
        # Not in the driver's group: a Ctrl-C at the terminal is the driver's alone.
        assert m["zygote_pgid"] != os.getpgid(0) if m["forked"] else m["zygote_pgid"] is None
        assert m["env"] == "seen" and m["stdout_is_log"] is True
        with open(os.path.join(r.path, "rank_0.log")) as f:
            assert "hello from the rank" in f.read()
    assert len({r.metrics["pid"] for r in grid}) == 3


def test_a_forked_ranks_exit_status_fails_its_trial(storage):
    grid = fit(storage, "exit", {"exit_code": 3})
    assert grid[0].status == "ERROR"
    assert "exited with code 3" in str(grid[0].error)


def test_a_dead_zygote_means_exec(storage):
    # Without prestarted ranks: a spare forked before the zygote died is forked.
    grid = fit(storage, "dead", {"kill_zygote": tune.grid_search([True, False, False])},
               max_concurrent_trials=1, prestart_workers=False)
    assert [r.status for r in grid] == ["TERMINATED"] * 3
    assert [r.metrics["forked"] for r in grid] == [True, False, False]


def test_processes_left_behind_are_reaped_and_the_drivers_own_children_kept(storage):
    # The driver's own child, exiting with 7 while fit() runs: its status stays
    # the driver's (subprocess would read 0 if tunerun reaped it). The sleeps
    # here are the scenario's timeline (which process outlives which), not waits.
    own = subprocess.Popen(["sh", "-c", "sleep 0.3; exit 7"])
    # Trial 0 leaves a `sleep 0.5` behind (re-parented to the driver when its
    # rank exits); trial 1 outlasts it.
    fit(storage, "left", {"case": tune.grid_search([{"leave_child": 0.5}, {"sleep": 1.5}])},
        max_concurrent_trials=1)
    assert own.wait() == 7
    assert zombies_of(os.getpid()) == []
    assert not is_child_subreaper()  # as before fit()
