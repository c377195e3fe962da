"""The spec table (tune/spec/fields.h) from Python: every field Python sets
reaches the engine's spec from the keyword the table names, and the rules
across fields (BOHB needs HyperBand) hold for a Python run as for a sweep
file. tests/tune/spec_fields_test.cpp walks the sweep file and JSON."""

import json
import os
import sqlite3

import pytest

from tunerun import _tunerun, train, tune
from tunerun.tune import search

import trainables

FIELDS = _tunerun.spec_fields()


def configs(path, value, storage):
    """TuneConfig and RunConfig with the keyword at `path` ("TuneConfig.seed",
    "RunConfig.failure_config.max_failures") set to `value`."""
    tune_kwargs = {"mode": "min"}
    run_kwargs = {"name": "fields", "storage_path": storage, "verbose": 0}
    config, *attributes = path.split(".")
    if config == "TuneConfig":
        tune_kwargs[attributes[0]] = value
    elif len(attributes) == 1:
        run_kwargs[attributes[0]] = value
    else:
        part = {"failure_config": train.FailureConfig,
                "checkpoint_config": train.CheckpointConfig,
                "cluster": train.ClusterConfig}[attributes[0]]
        run_kwargs[attributes[0]] = part(**{attributes[1]: value})
    return tune.TuneConfig(**tune_kwargs), train.RunConfig(**run_kwargs)


def at(spec, key):
    for part in key.split("."):
        spec = spec[part]
    return spec


def test_the_table_names_keywords_python_has():
    keywords = [f["python"] for f in FIELDS if f["python"]]
    assert "TuneConfig.num_samples" in keywords
    assert "RunConfig.failure_config.max_failures" in keywords
    for field in FIELDS:
        assert field["example"] != field["default"], field["key"]


@pytest.mark.parametrize("field", [f for f in FIELDS if f["python"]], ids=lambda f: f["key"])
def test_every_python_keyword_reaches_its_field(storage, field):
    tune_config, run_config = configs(field["python"], field["example"], storage)
    tuner = tune.Tuner(trainables.quadratic, param_space={"x": 1}, tune_config=tune_config,
                       run_config=run_config)
    spec = _tunerun.check_spec(tuner._spec)
    assert at(spec, field["key"]) == field["example"]


@pytest.mark.parametrize("field", [f for f in FIELDS if f["python"]], ids=lambda f: f["key"])
def test_a_keyword_of_another_type_names_the_field(storage, field):
    wrong = 1 if field["type"] in ("string", "path", "min|max", "string|list", "min|max|list",
                                   "path|list") else "1"
    tune_config, run_config = configs(field["python"], wrong, storage)
    with pytest.raises(ValueError, match=f"key '{field['key']}': expected "):
        tune.Tuner(trainables.quadratic, param_space={"x": 1}, tune_config=tune_config,
                   run_config=run_config)


class BOHB(search._NativeSearcher):
    """The C++ BOHB by name, as a sweep file's [search] algorithm = "bohb"."""
    _algorithm = "bohb"


def bohb_tuner(storage, name, scheduler=None):
    return tune.Tuner(trainables.stepper, param_space={"x": tune.uniform(0, 4), "steps": 3},
                      tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=3,
                                                  search_alg=BOHB(), scheduler=scheduler),
                      run_config=train.RunConfig(name=name, storage_path=storage, verbose=0))


def test_bohb_needs_hyperband_in_python_too(storage):
    with pytest.raises(ValueError, match=r"key 'search\.algorithm'.*\"hyperband\".*got \"fifo\""):
        bohb_tuner(storage, "alone")
    with pytest.raises(ValueError, match=r"got \"asha\""):
        bohb_tuner(storage, "asha", tune.schedulers.ASHAScheduler(max_t=3))
    assert not os.path.exists(storage)


def test_a_python_run_with_bohb_gets_hyperband_for_bohb(storage):
    tuner = bohb_tuner(storage, "bohb", tune.schedulers.HyperBandScheduler(max_t=3))
    assert _tunerun.check_spec(tuner._spec)["scheduler"]["for_bohb"] is True
    results = tuner.fit()
    assert results.num_errors == 0
    assert len(results) == 3
    # The spec the run stored is the finished one.
    db = sqlite3.connect(os.path.join(storage, "bohb", "experiment.db"))
    (stored,) = db.execute("SELECT spec FROM experiment").fetchone()
    scheduler = json.loads(stored)["sweep"]["scheduler"]
    assert scheduler["type"] == "hyperband"
    assert scheduler["for_bohb"] is True


def test_cluster_settings_come_from_init_unless_the_run_config_says(storage):
    """tunerun.init's cluster settings are every RunConfig's defaults; a
    RunConfig's own (a ClusterConfig or a dict) win."""
    import tunerun

    def cluster_of(run_config):
        tuner = tune.Tuner(trainables.quadratic, param_space={"x": 1},
                           tune_config=tune.TuneConfig(mode="min"), run_config=run_config)
        return _tunerun.check_spec(tuner._spec)["cluster"]

    plain = train.RunConfig(name="c", storage_path=storage, verbose=0)
    assert cluster_of(plain)["launcher"] == "auto"
    try:
        tunerun.init(launcher="local", control_address="10.1.2.3")
        assert cluster_of(plain) == {**cluster_of(plain), "launcher": "local",
                                     "control_address": "10.1.2.3"}
        own = train.RunConfig(name="c", storage_path=storage, verbose=0,
                              cluster={"control_address": "10.9.9.9"})
        assert cluster_of(own)["control_address"] == "10.9.9.9"
        assert cluster_of(own)["launcher"] == "local"
    finally:
        tunerun.shutdown()
    assert cluster_of(plain)["launcher"] == "auto"
    with pytest.raises(ValueError, match="RunConfig.cluster"):
        train.RunConfig(cluster="slurm")
