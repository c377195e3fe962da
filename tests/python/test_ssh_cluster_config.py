"""The SSH launcher's settings from Python (train.ClusterConfig, RunConfig(cluster=...),
tunerun.init): the sweep file's [cluster] keys of the same names, checked by the
same rules when the Tuner is made, each error a ValueError naming the key. No SSH
host is needed: nothing runs. tests/ssh/python_test.cpp runs a Tuner over the
local SSH cluster."""

import os

import pytest

import tunerun
from tunerun import _tunerun, train, tune

import trainables


@pytest.fixture
def hostfile(tmp_path):
    path = tmp_path / "hosts"
    path.write_text("# two hosts\nh1 slots=2\nh2 cpus=4 gpus=1\n")
    return str(path)


def tuner(storage, **cluster):
    return tune.Tuner(trainables.quadratic, param_space={"x": 1},
                      tune_config=tune.TuneConfig(mode="min"),
                      run_config=train.RunConfig(name="ssh", storage_path=storage, verbose=0,
                                                 cluster=cluster))


def cluster_of(t):
    return _tunerun.check_spec(t._spec)["cluster"]


def test_every_ssh_setting_reaches_the_spec(storage, hostfile, tmp_path):
    (tmp_path / "ssh_config").write_text("Host h*\n  User root\n")
    cluster = cluster_of(tuner(storage, launcher="ssh", control_address="10.1.2.3",
                               hostfile=hostfile, ssh_config=tmp_path / "ssh_config",
                               ssh_retry_s=3, ssh_retire_after=0))
    assert cluster == {**cluster, "launcher": "ssh", "control_address": "10.1.2.3",
                       "hostfile": hostfile, "ssh_config": str(tmp_path / "ssh_config"),
                       "ssh_retry_s": 3, "ssh_retire_after": 0}


def test_relative_paths_are_the_working_directory_s(storage, hostfile, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cluster = cluster_of(tuner(storage, launcher="ssh", control_address="10.1.2.3",
                               hostfile="hosts", ssh_config="ssh_config"))
    assert cluster["hostfile"] == str(tmp_path / "hosts")
    assert cluster["ssh_config"] == str(tmp_path / "ssh_config")


def test_init_gives_the_ssh_settings_to_every_later_run(storage, hostfile):
    try:
        tunerun.init(launcher="ssh", control_address="10.1.2.3", hostfile=hostfile,
                     ssh_retry_s=5)
        cluster = cluster_of(tuner(storage))
        assert (cluster["launcher"], cluster["hostfile"], cluster["ssh_retry_s"]) == (
            "ssh", hostfile, 5)
        # A run's own values win.
        assert cluster_of(tuner(storage, ssh_retry_s=7))["ssh_retry_s"] == 7
    finally:
        tunerun.shutdown()


def test_ssh_refuses_a_loopback_control_address_naming_the_key(storage, hostfile):
    with pytest.raises(ValueError, match=r"cluster\.control_address.*loopback.*control_interface"):
        tuner(storage, launcher="ssh", control_address="127.0.0.1", hostfile=hostfile)
    with pytest.raises(ValueError, match=r"cluster\.control_interface.*loopback"):
        tuner(storage, launcher="ssh", control_interface="lo", hostfile=hostfile)
    # None at all is loopback too: a script has no --control-address to add one.
    with pytest.raises(ValueError, match=r"cluster\.control_address.*loopback"):
        tuner(storage, launcher="ssh", hostfile=hostfile)
    assert not os.path.exists(storage)


def test_ssh_needs_a_hostfile_it_can_read_naming_the_key_and_line(storage, tmp_path):
    with pytest.raises(ValueError, match=r"cluster\.hostfile.*needs a hostfile"):
        tuner(storage, launcher="ssh", control_address="10.1.2.3")
    with pytest.raises(ValueError, match=r"cluster\.hostfile.*cannot read hostfile"):
        tuner(storage, launcher="ssh", control_address="10.1.2.3",
              hostfile=str(tmp_path / "missing"))
    (tmp_path / "bad").write_text("h1 slots=2\nh2 slots=two\n")
    with pytest.raises(ValueError, match=r"bad:2:.*slots=two"):
        tuner(storage, launcher="ssh", control_address="10.1.2.3", hostfile=str(tmp_path / "bad"))
    assert not os.path.exists(storage)


@pytest.mark.parametrize("key, value, rule", [
    ("ssh_retry_s", 0, "must be between 1 and 3600"),
    ("ssh_retry_s", 7200, "must be between 1 and 3600"),
    ("ssh_retire_after", -1, "must be >= 0"),
    ("ssh_retry_s", "often", "expected"),
    ("hostfile", 3, "expected"),
    ("ssh_config", 3, "expected"),
])
def test_a_bad_ssh_setting_names_its_key(storage, hostfile, key, value, rule):
    with pytest.raises(ValueError, match=rf"cluster\.{key}.*{rule}"):
        tuner(storage, **{"launcher": "ssh", "control_address": "10.1.2.3",
                          "hostfile": hostfile, key: value})


def test_an_interface_this_machine_lacks_is_refused_naming_the_key(storage, hostfile):
    with pytest.raises(ValueError, match=r"cluster\.control_interface.*no interface 'eth9'"):
        tuner(storage, launcher="ssh", control_interface="eth9", hostfile=hostfile)


def test_other_launchers_ignore_the_ssh_settings(storage):
    # As a sweep file: a hostfile named for later does not stop a local run.
    assert cluster_of(tuner(storage, launcher="local", hostfile="/nonexistent/hosts"))[
        "launcher"] == "local"


def test_the_slurm_wait_and_end_margin_reach_the_spec_and_are_checked(storage):
    cluster = cluster_of(tuner(storage, launcher="local", node_wait_s=90, end_margin_s=300))
    assert (cluster["node_wait_s"], cluster["end_margin_s"]) == (90, 300)
    with pytest.raises(ValueError, match=r"cluster\.node_wait_s.*must be between 1 and 86400"):
        tuner(storage, launcher="local", node_wait_s=0)
    with pytest.raises(ValueError, match=r"cluster\.end_margin_s.*must be between 0 and 86400"):
        tuner(storage, launcher="local", end_margin_s=-1)
