"""Ray Tune's getting-started and stopping guides, as a Ray user writes them:
tune.RunConfig and its parts, ray.init, a function trainable that returns
its final result, and a result with done=True ending its trial."""

import warnings

import tunerun
from tunerun import train, tune

import ray_trainables


def fit(trainable, storage, name, param_space=None, **run):
    tuner = tune.Tuner(trainable, param_space=param_space or {},
                       run_config=tune.RunConfig(name=name, storage_path=storage, verbose=0,
                                                 **run))
    return tuner.fit()


def test_tune_config_classes_are_ray_s():
    # Ray 2.7+ documents tune.RunConfig, tune.CheckpointConfig, tune.FailureConfig;
    # the train.* spellings stay.
    assert tune.RunConfig is train.RunConfig
    assert tune.CheckpointConfig is train.CheckpointConfig
    assert tune.FailureConfig is train.FailureConfig
    config = tune.RunConfig(checkpoint_config=tune.CheckpointConfig(num_to_keep=2),
                            failure_config=tune.FailureConfig(max_failures=3))
    assert config.checkpoint_config.num_to_keep == 2
    assert config.failure_config.max_failures == 3


def test_init_accepts_ray_s_arguments_and_warns_once():
    tunerun.shutdown()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tunerun.init(num_cpus=4, num_gpus=0, ignore_reinit_error=True, object_store_memory=1)
        tunerun.init(num_cpus=4, include_dashboard=False)
    assert len(caught) == 1
    assert "ignore_reinit_error, object_store_memory" in str(caught[0].message)
    assert tunerun.is_initialized()
    tunerun.shutdown()
    assert not tunerun.is_initialized()


def test_returned_dict_is_the_final_result(storage):
    # Ray's quick start: `return {"score": ...}`, then get_best_result finds it.
    results = fit(ray_trainables.returns_score, storage, "ret",
                  param_space={"a": tune.grid_search([1, 2, 3]), "b": 1})
    best = results.get_best_result(metric="score", mode="max")
    assert best.metrics["score"] == 10
    assert best.config["a"] == 3
    assert all(r.status == "TERMINATED" for r in results)


def test_returned_dict_follows_the_reports(storage):
    results = fit(ray_trainables.reports_then_returns, storage, "after")
    result = results[0]
    assert result.metrics["score"] == 100 and result.metrics["final"] is True
    assert result.metrics["training_iteration"] == 4
    assert len(result.metrics_dataframe) == 4


def test_done_true_ends_the_trial(storage):
    results = fit(ray_trainables.reports_done_early, storage, "done")
    result = results[0]
    assert result.status == "TERMINATED" and result.error is None
    assert result.metrics["step"] == 2 and result.metrics["training_iteration"] == 3


def test_stop_done_true_is_accepted(storage):
    results = fit(ray_trainables.returns_nothing, storage, "stopdone", stop={"done": True})
    assert results[0].status == "TERMINATED"
    assert results[0].metrics["training_iteration"] == 2


def test_stop_on_a_boolean_flag(storage):
    # Ray's stop dict: a trial stops once result[key] >= bound; True: the flag is set.
    results = fit(ray_trainables.converges_at_step_one, storage, "flag",
                  stop={"converged": True})
    assert results[0].status == "TERMINATED"
    assert results[0].metrics["step"] == 1
