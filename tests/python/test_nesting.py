"""A TorchTrainer fitted inside a Tune trial (Ray Train's "train driver"
function): it gets its own ranks, its own rendezvous and control channel,
within the resources the trial holds; its results are in its own Result,
and reach the trial through TuneReportCallback. A ScalingConfig with
domains in a Tuner's param_space gives each trial its own group, the same
way."""

import os

import pytest

pytest.importorskip("torch")

import tunerun  # noqa: E402
from tunerun import train, tune  # noqa: E402
from tunerun.train import ScalingConfig  # noqa: E402
from tunerun.train.torch import TorchTrainer  # noqa: E402
from tunerun.tune.integration.ray_train import TuneReportCallback  # noqa: E402


def steps_loop(config):
    """Reports `steps` results with a checkpoint each; rank 1 raises when told."""
    import tempfile
    import time
    context = train.get_context()
    if config.get("fail") and context.get_world_rank() == context.get_world_size() - 1:
        raise ValueError("the last rank broke")
    start = time.time()
    for step in range(config.get("steps", 3)):
        time.sleep(config.get("sleep_s", 0))
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, f"rank_{context.get_world_rank()}"), "w") as f:
                f.write(str(step))
            train.report({"loss": config.get("lr", 1.0) / (step + 1),
                          "world_size": context.get_world_size(), "rank_pid": os.getpid(),
                          "start": start, "now": time.time()},
                         checkpoint=train.Checkpoint.from_directory(d))


def driver(config):
    """Ray's train driver: fits a TorchTrainer in the trial; reports through
    TuneReportCallback, then its own summary of the nested Result."""
    trainer = TorchTrainer(
        steps_loop, train_loop_config=config["train_loop_config"],
        scaling_config=ScalingConfig(num_workers=config["num_workers"]),
        run_config=train.RunConfig(
            name=f"train-trial_id={tune.get_context().get_trial_id()}",
            storage_path=config["storage"], verbose=0, callbacks=[TuneReportCallback()]))
    result = trainer.fit()
    tune.report({"nested_world_size": result.metrics["world_size"],
                 "nested_iterations": result.metrics["training_iteration"],
                 "nested_path": result.path, "driver_pid": os.getpid(),
                 "loss": result.metrics["loss"]})


def run_config(storage, name):
    return train.RunConfig(name=name, storage_path=storage, verbose=0)


def test_a_trainer_fitted_in_a_trial_runs_its_own_group_and_reports_to_the_trial(storage):
    grid = tune.Tuner(
        tune.with_resources(driver, ScalingConfig(num_workers=2)),
        param_space={"num_workers": 2, "storage": storage,
                     "train_loop_config": {"lr": tune.grid_search([1.0, 2.0]), "steps": 3}},
        tune_config=tune.TuneConfig(metric="loss", mode="min"),
        run_config=run_config(storage, "outer")).fit()
    assert not grid.errors, grid.errors
    for result in grid:
        history = result.metrics_dataframe.sort_values("training_iteration")
        # Three results forwarded by the callback, then the driver's own.
        assert list(history["world_size"][:3]) == [2, 2, 2]
        assert result.metrics["nested_world_size"] == 2
        assert result.metrics["nested_iterations"] == 3
        assert result.metrics["training_iteration"] == 4
        lr = result.config["train_loop_config"]["lr"]
        assert list(history["loss"]) == [lr, lr / 2, lr / 3, lr / 3]
        # The forwarded results name the nested checkpoint, as Ray's callback does.
        assert os.path.isfile(os.path.join(history["checkpoint_path"].iloc[2], "rank_1"))
        # The nested run is an experiment of its own, with two ranks of its own.
        nested = result.metrics["nested_path"]
        assert os.path.basename(os.path.dirname(os.path.dirname(nested))) == \
            f"train-trial_id={result.trial_id}"
        assert sorted(f for f in os.listdir(nested) if f.startswith("rank_")) == \
            ["rank_0.log", "rank_1.log"]
        assert history["rank_pid"].iloc[0] != result.metrics["driver_pid"]
        # One trial of its own, read back as any experiment.
        assert len(tunerun.load(os.path.dirname(os.path.dirname(nested)))) == 1


def test_the_nested_run_holds_the_trials_resources_and_no_more(storage):
    import json
    import sqlite3
    grid = tune.Tuner(
        tune.with_resources(driver, tune.PlacementGroupFactory([{"CPU": 1}, {"CPU": 1}])),
        param_space={"num_workers": 2, "storage": storage, "train_loop_config": {"steps": 1}},
        tune_config=tune.TuneConfig(metric="loss", mode="min"),
        run_config=run_config(storage, "holds")).fit()
    assert not grid.errors, grid.errors
    nested = os.path.dirname(os.path.dirname(grid[0].metrics["nested_path"]))
    with sqlite3.connect(os.path.join(nested, "experiment.db")) as db:
        (text,) = db.execute("SELECT spec FROM experiment").fetchone()
    spec = json.loads(text)
    spec = spec.get("sweep", spec)
    assert spec["resources"]["cpus"] == 2 and spec["cluster"]["launcher"] == "local"


def test_a_nested_group_larger_than_the_trial_fails_the_trial_saying_what_to_change(storage):
    grid = tune.Tuner(
        driver,  # one CPU per trial, by default
        param_space={"num_workers": 2, "storage": storage, "train_loop_config": {"steps": 1}},
        run_config=run_config(storage, "too_small")).fit()
    error = grid[0].error
    assert isinstance(error, ValueError)
    assert "runs 2 ranks needing 2 CPUs (the trial holds 1)" in str(error)
    assert "tune.with_resources(trainable, ScalingConfig(num_workers=2, ...))" in str(error)


def test_trials_holding_nested_groups_share_the_machine_by_their_resources(storage):
    # Two CPUs in all, two per trial: the nested groups never run at once.
    tunerun.init(num_cpus=2)
    try:
        grid = tune.Tuner(
            tune.with_resources(driver, ScalingConfig(num_workers=2)),
            param_space={"num_workers": 2, "storage": storage,
                         "train_loop_config": {"steps": 2, "sleep_s": 0.1,
                                               "lr": tune.grid_search([1.0, 2.0, 3.0])}},
            tune_config=tune.TuneConfig(metric="loss", mode="min"),
            run_config=run_config(storage, "shared")).fit()
    finally:
        tunerun.shutdown()
    assert not grid.errors, grid.errors
    spans = sorted((r.metrics_dataframe["start"].min(), r.metrics_dataframe["now"].max())
                   for r in grid)
    assert all(earlier[1] <= later[0] for earlier, later in zip(spans, spans[1:]))


def test_tune_report_callback_outside_a_trial_is_an_error():
    with pytest.raises(RuntimeError, match="must be used in a Tune session"):
        TuneReportCallback()


def test_with_resources_takes_a_scaling_config_as_its_placement_group():
    scaling = ScalingConfig(num_workers=3, resources_per_worker={"CPU": 2})
    assert scaling.as_placement_group_factory().bundles == [{}] + [{"CPU": 2}] * 3
    assert scaling.total_resources == {"CPU": 6}
    assert ScalingConfig(num_workers=2, use_gpu=True).total_resources == {"CPU": 2, "GPU": 2}
    wrapped = tune.with_resources(driver, scaling)
    assert wrapped.resources == {"cpu": 6}


# A ScalingConfig per trial ------------------------------------------------


def test_a_scaling_config_with_domains_gives_each_trial_its_group(storage):
    trainer = TorchTrainer(steps_loop, train_loop_config={"steps": 3},
                           scaling_config=ScalingConfig(num_workers=1))
    grid = tune.Tuner(
        trainer,
        param_space={"scaling_config": ScalingConfig(num_workers=tune.grid_search([1, 2])),
                     "train_loop_config": {"lr": tune.grid_search([1.0, 4.0])}},
        tune_config=tune.TuneConfig(metric="loss", mode="min"),
        run_config=run_config(storage, "per_trial")).fit()
    assert not grid.errors, grid.errors
    seen = set()
    for result in grid:
        scaling = result.config["scaling_config"]
        assert isinstance(scaling, ScalingConfig)
        assert result.config["train_loop_config"]["steps"] == 3  # the trainer's own, merged
        history = result.metrics_dataframe
        assert set(history["world_size"]) == {scaling.num_workers}
        assert result.metrics["training_iteration"] == 3
        # Each rank's checkpoint files, now the trial's own.
        files = sorted(os.listdir(result.checkpoint.path))
        assert files == [f"rank_{r}" for r in range(scaling.num_workers)]
        assert result.checkpoint.path.startswith(result.path)
        seen.add((scaling.num_workers, result.config["train_loop_config"]["lr"]))
    assert seen == {(1, 1.0), (2, 1.0), (1, 4.0), (2, 4.0)}
    best = grid.get_best_result()
    assert best.config["train_loop_config"]["lr"] == 1.0


def test_per_trial_groups_stop_fail_and_resume_as_trials_do(storage):
    trainer = TorchTrainer(steps_loop, train_loop_config={"steps": 30, "sleep_s": 0.01})
    grid = tune.Tuner(
        trainer,
        param_space={"scaling_config": {"num_workers": tune.choice([2])},
                     "train_loop_config": {"fail": tune.grid_search([False, True])}},
        run_config=train.RunConfig(name="stops", storage_path=storage, verbose=0,
                                   stop={"training_iteration": 4})).fit()
    by_fail = {r.config["train_loop_config"]["fail"]: r for r in grid}
    assert by_fail[False].error is None
    assert by_fail[False].metrics["training_iteration"] == 4  # the outer stop ended the group
    error = by_fail[True].error
    assert isinstance(error, ValueError) and "the last rank broke" in str(error)
    assert "raised in a rank of the trial's trainer" in str(error)


def test_a_domain_without_a_largest_value_is_refused():
    trainer = TorchTrainer(steps_loop)
    with pytest.raises(ValueError, match=r"scaling_config\.num_workers: a uniform domain"):
        tune.Tuner(trainer, param_space={
            "scaling_config": ScalingConfig(num_workers=tune.uniform(1, 3))})


def test_per_trial_scaling_reserves_the_largest_group():
    trainer = TorchTrainer(steps_loop)
    tuner = tune.Tuner(trainer, param_space={"scaling_config": ScalingConfig(
        num_workers=tune.grid_search([1, 3]),
        resources_per_worker={"CPU": tune.choice([0.5, 0.25])})})
    assert tuner._spec["trainable"]["cpus_per_worker"] == 1.5


def failing_driver(config):
    """Fits a trainer named after the trial; the trial's first attempt fails
    after it, so the second finds the trainer's run and continues it."""
    import time
    trainer = TorchTrainer(
        resumable_loop, train_loop_config={"steps": config["steps"],
                                           "marker": os.path.join(config["storage"], "failed")},
        scaling_config=ScalingConfig(num_workers=2),
        run_config=train.RunConfig(name=f"train-{tune.get_context().get_trial_id()}",
                                   storage_path=config["storage"], verbose=0,
                                   callbacks=[TuneReportCallback()]))
    if tune.get_context().get_attempt() == 0:
        try:
            trainer.fit()
        except train.TrainingFailedError:
            pass
        time.sleep(0.1)
        raise RuntimeError("the driver failed after the trainer's second step")
    result = trainer.fit()
    tune.report({"nested_iterations": result.metrics["training_iteration"],
                 "resumed_at": result.metrics["resumed_at"]})


def resumable_loop(config):
    import tempfile
    checkpoint = train.get_checkpoint()
    start = 0
    if checkpoint:
        with open(os.path.join(checkpoint.path, "step")) as f:
            start = int(f.read()) + 1
    for step in range(start, config["steps"]):
        if step == 2 and train.get_context().get_world_rank() == 0 and \
                not os.path.exists(config["marker"]):
            open(config["marker"], "w").close()
            raise ValueError("the first attempt stops here")
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "step"), "w") as f:
                f.write(str(step))
            train.report({"resumed_at": start}, checkpoint=train.Checkpoint.from_directory(d))


def test_a_restarted_trial_continues_its_trainers_run(storage):
    grid = tune.Tuner(
        tune.with_resources(failing_driver, ScalingConfig(num_workers=2)),
        param_space={"steps": 4, "storage": storage},
        run_config=train.RunConfig(name="restarts", storage_path=storage, verbose=0,
                                   failure_config=train.FailureConfig(max_failures=1))).fit()
    assert not grid.errors, grid.errors
    # The second attempt went on from the trainer's checkpoint of step 1.
    assert grid[0].metrics["resumed_at"] == 2 and grid[0].metrics["nested_iterations"] == 4
    assert sorted(os.listdir(storage)) == ["failed", "restarts", "train-restarts_00000"]
