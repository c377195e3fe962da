"""Ray Tune's callbacks guide: a tune.Callback's hooks get Ray's arguments
(iteration, the trials, the trial and its result) and on_experiment_end the
trials after the run; a LoggerCallback may override on_trial_result itself,
as Ray's logging example does."""

from tunerun import tune
from tunerun.tune.logger import LoggerCallback
from tunerun.tune.result import SHOULD_CHECKPOINT

import ray_trainables


class RayStyle(tune.Callback):
    def __init__(self):
        self.events = []

    def on_trial_start(self, iteration, trials, trial, **info):
        self.events.append(("start", trial.trial_id, trial.config["a"], trial.trainable_name))

    def on_trial_result(self, iteration, trials, trial, result, **info):
        assert trial in trials
        self.events.append(("result", trial.trial_id, result["score"]))

    def on_trial_complete(self, iteration, trials, trial, **info):
        self.events.append(("complete", trial.trial_id, trial.last_result["score"],
                            trial.status))

    def on_experiment_end(self, trials, **info):
        self.events.append(("end", sorted((t.trial_id, t.status) for t in trials)))


def fit(storage, name, callbacks):
    return tune.Tuner(ray_trainables.returns_score,
                      param_space={"a": tune.grid_search([1, 2]), "b": 0},
                      tune_config=tune.TuneConfig(max_concurrent_trials=1),
                      run_config=tune.RunConfig(name=name, storage_path=storage, verbose=0,
                                                callbacks=callbacks)).fit()


def test_hooks_with_rays_arguments(storage):
    callback = RayStyle()
    fit(storage, "ray", [callback])
    first, second = "ray_00000", "ray_00001"
    assert callback.events == [
        ("start", first, 1, "returns_score"), ("result", first, 1),
        ("complete", first, 1, "TERMINATED"),
        ("start", second, 2, "returns_score"), ("result", second, 4),
        ("complete", second, 4, "TERMINATED"),
        ("end", [(first, "TERMINATED"), (second, "TERMINATED")])]


class PrintsItsTrials(LoggerCallback):
    def on_trial_result(self, iteration, trials, trial, result, **info):
        print(f"trial {trial}: {result['score']}")


def test_a_logger_callback_overriding_on_trial_result(storage, capfd):
    fit(storage, "printed", [PrintsItsTrials()])
    out = capfd.readouterr().out
    assert "trial printed_00000: 1" in out and "trial printed_00001: 4" in out


class AsksForCheckpoints(tune.Callback):
    def on_trial_result(self, iteration, trials, trial, result, **info):
        result[SHOULD_CHECKPOINT] = True


def test_a_callback_asking_for_a_checkpoint_is_told_it_cannot(storage, capfd):
    # Where we differ from Ray: the request does not reach the trial.
    grid = fit(storage, "asks", [AsksForCheckpoints()])
    assert grid.num_errors == 0
    assert capfd.readouterr().err.count("a callback cannot make a trial checkpoint") == 1
