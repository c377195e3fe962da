"""Searchers and schedulers written in Python (subclasses of
tune.search.Searcher and tune.schedulers.TrialScheduler), called by the C++
controller."""

import os

import pytest

from tunerun import train, tune
from tunerun.tune.schedulers import TrialScheduler
from tunerun.tune.search import Searcher

import trainables


def run_config(storage, name, **kwargs):
    return train.RunConfig(name=name, storage_path=storage, verbose=0, **kwargs)


class ListSearcher(Searcher):
    """Suggests the given xs in order; records what the controller tells it."""
    failing = True  # a class attribute: the restored state does not reset it

    def __init__(self, xs, fail_at=None):
        super().__init__()
        self.xs = list(xs)
        self.fail_at = fail_at
        self.suggested = {}
        self.results = []
        self.completed = {}
        self.space = None

    def set_search_properties(self, metric, mode, config, **spec):
        self.space = config
        return super().set_search_properties(metric, mode, config)

    def suggest(self, trial_id):
        if ListSearcher.failing and len(self.suggested) == self.fail_at:
            raise RuntimeError("the searcher broke")
        if len(self.suggested) == len(self.xs):
            return Searcher.FINISHED
        self.suggested[trial_id] = self.xs[len(self.suggested)]
        return {"x": self.suggested[trial_id]}

    def on_trial_result(self, trial_id, result):
        self.results.append((trial_id, result["training_iteration"], result["loss"]))

    def on_trial_complete(self, trial_id, result=None, error=False):
        self.completed[trial_id] = (result["loss"], error)


def test_python_searcher_drives_the_sweep(storage):
    searcher = ListSearcher([3, -1, 2, 7])
    grid = tune.Tuner(trainables.stepper, param_space={"x": tune.uniform(-5, 5), "steps": 2},
                      tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=-1,
                                                  search_alg=searcher),
                      run_config=run_config(storage, "list")).fit()
    assert grid.num_terminated == 4 and not grid.errors
    # The configs run are its suggestions, with the param_space's constants.
    assert {r.metrics["trial_id"]: r.config for r in grid} == {
        t: {"x": x, "steps": 2} for t, x in searcher.suggested.items()}
    assert searcher.metric == "loss" and searcher.mode == "min"
    assert searcher.space["steps"] == 2 and isinstance(searcher.space["x"], tune.Domain)
    # It saw every result of every trial, then each completion.
    assert sorted(searcher.results) == sorted(
        (t, i, float(x)) for t, x in searcher.suggested.items() for i in (1, 2))
    assert searcher.completed == {t: (float(x), False) for t, x in searcher.suggested.items()}
    assert grid.get_best_result().config["x"] == -1


def test_python_searcher_config_samples_what_it_leaves_out(storage):
    searcher = ListSearcher([1, 2])
    grid = tune.Tuner(trainables.stepper,
                      param_space={"steps": 1, "seed": tune.randint(0, 10),
                                   "y": tune.sample_from(lambda spec: spec.config.x * 10)},
                      tune_config=tune.TuneConfig(num_samples=-1, search_alg=searcher),
                      run_config=run_config(storage, "samples")).fit()
    for r in grid:
        assert r.config["y"] == 10 * r.config["x"] and 0 <= r.config["seed"] < 10


def test_num_samples_caps_a_python_searcher(storage):
    searcher = ListSearcher([1, 2, 3, 4])
    grid = tune.Tuner(trainables.stepper, param_space={"steps": 1},
                      tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=3,
                                                  search_alg=searcher),
                      run_config=run_config(storage, "capped")).fit()
    assert sorted(r.config["x"] for r in grid) == [1, 2, 3]


class OneAtATime(Searcher):
    """Waits for each trial to finish (suggest -> None meanwhile), then tries
    the last x plus one: a searcher that learns from completions."""

    def __init__(self):
        super().__init__()
        self.live = None
        self.next_x = 0
        self.not_ready = 0

    def suggest(self, trial_id):
        if self.live is not None:
            self.not_ready += 1
            return None
        self.live = trial_id
        return {"x": self.next_x}

    def on_trial_complete(self, trial_id, result=None, error=False):
        assert trial_id == self.live
        self.live = None
        self.next_x = result["loss"] + 1


def test_python_searcher_not_ready_is_asked_again(storage):
    searcher = OneAtATime()
    grid = tune.Tuner(trainables.stepper, param_space={"steps": 1},
                      tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=3,
                                                  max_concurrent_trials=3, search_alg=searcher),
                      run_config=run_config(storage, "learns")).fit()
    assert sorted(r.config["x"] for r in grid) == [0, 1, 2]
    assert searcher.not_ready > 0


def test_python_searcher_restores_its_state(storage):
    # The searcher raises at its third suggestion: fit() ends with that error;
    # a fresh searcher given to Tuner.restore continues from the saved state.
    param_space = {"steps": 1}
    tune_config = tune.TuneConfig(metric="loss", mode="min", num_samples=-1,
                                  search_alg=ListSearcher([5, 6, 7, 8], fail_at=2),
                                  max_concurrent_trials=1)
    with pytest.raises(RuntimeError, match="the searcher broke"):
        tune.Tuner(trainables.stepper, param_space=param_space, tune_config=tune_config,
                   run_config=run_config(storage, "resumed")).fit()
    fresh = ListSearcher([])
    tune_config.search_alg = fresh
    ListSearcher.failing = False
    try:
        grid = tune.Tuner.restore(f"{storage}/resumed", trainables.stepper,
                                  param_space=param_space, tune_config=tune_config).fit()
    finally:
        ListSearcher.failing = True
    assert fresh.xs == [5, 6, 7, 8] and fresh.fail_at == 2  # its pickled attributes
    assert sorted(r.config["x"] for r in grid) == [5, 6, 7, 8]


class BadSuggestion(Searcher):
    def suggest(self, trial_id):
        return [1, 2]


def test_python_searcher_bad_suggestion(storage):
    with pytest.raises(TypeError, match=r"BadSuggestion.suggest.*expected a config dict"):
        tune.Tuner(trainables.stepper, param_space={"steps": 1},
                   tune_config=tune.TuneConfig(search_alg=BadSuggestion()),
                   run_config=run_config(storage, "bad_suggestion")).fit()


class StopAbove(TrialScheduler):
    """Stops trials whose loss is above `bound` at iteration 2; pauses the
    others once at iteration 1 (they resume from their checkpoint)."""

    def __init__(self, bound):
        super().__init__()
        self.bound = bound
        self.added, self.completed, self.removed, self.paused = [], [], [], set()
        self.chosen_paused = 0

    def on_trial_add(self, tune_controller, trial):
        self.added.append(trial)

    def on_trial_result(self, tune_controller, trial, result):
        assert trial in tune_controller.get_trials() and trial.status == "RUNNING"
        if result["training_iteration"] == 2 and result["loss"] > self.bound:
            return TrialScheduler.STOP
        if result["training_iteration"] == 1 and trial.trial_id not in self.paused:
            self.paused.add(trial.trial_id)
            return TrialScheduler.PAUSE
        return TrialScheduler.CONTINUE

    def choose_trial_to_run(self, tune_controller):
        trial = super().choose_trial_to_run(tune_controller)
        if trial is not None and trial.status == "PAUSED":
            self.chosen_paused += 1
        return trial

    def on_trial_complete(self, tune_controller, trial, result):
        self.completed.append((trial, result["training_iteration"]))

    def on_trial_remove(self, tune_controller, trial):
        self.removed.append(trial)


def test_python_scheduler_stops_and_pauses_trials(storage):
    scheduler = StopAbove(bound=2.5)
    grid = tune.Tuner(trainables.stepper,
                      param_space={"x": tune.grid_search([1, 2, 3, 4]), "steps": 4},
                      tune_config=tune.TuneConfig(metric="loss", mode="min",
                                                  scheduler=scheduler),
                      run_config=run_config(storage, "stops")).fit()
    by_x = {r.config["x"]: r.metrics for r in grid}
    assert {x: m["training_iteration"] for x, m in by_x.items()} == {1: 4, 2: 4, 3: 2, 4: 2}
    # Paused at iteration 1, each trial resumed in place: its function went on
    # from where report() waited, no checkpoint reloaded.
    assert all(m["resumed_at"] == 0 for m in by_x.values())
    assert len(scheduler.paused) == 4 and scheduler.chosen_paused >= 4
    assert len(scheduler.added) == 4
    # One Trial object per trial across hooks.
    assert {id(t) for t in scheduler.added} == {id(t) for t in scheduler.removed} | {
        id(t) for t, _ in scheduler.completed}
    assert sorted(t.config["x"] for t in scheduler.removed) == [3, 4]
    assert all(t.status == "TERMINATED" for t in scheduler.added)


class CloneTheBest(TrialScheduler):
    """PBT's exploit in a Python scheduler: the lr 1 trial pauses at iteration
    2 and resumes from the lr 100 trial's checkpoint with lr 200; the lr 0.5
    trial pauses at iteration 1 and is stopped while it waits."""

    def __init__(self):
        super().__init__()
        self.worse = self.donor = None
        self.exploited = False
        self.to_stop, self.removed = [], []

    def on_trial_result(self, tune_controller, trial, result):
        lr, iteration = trial.config["lr"], result["training_iteration"]
        if lr == 100.0:
            self.donor = trial
        if lr == 0.5 and iteration == 1:
            self.to_stop.append(trial)
            return TrialScheduler.PAUSE
        if lr == 1.0 and iteration == 2 and not self.exploited:
            self.worse = trial
            return TrialScheduler.PAUSE
        return TrialScheduler.CONTINUE

    def _ready(self):
        return self.donor is not None and self.donor.checkpoint_iteration >= 2

    def take_exploit(self, tune_controller, trial):
        if trial != self.worse or self.exploited or not self._ready():
            return None  # asked again before it resumes
        self.exploited = True
        return self.donor, {**self.donor.config, "lr": self.donor.config["lr"] * 2}

    def take_trials_to_stop(self, tune_controller):
        return list(self.to_stop)  # until on_trial_remove: it may still be pausing

    def on_trial_remove(self, tune_controller, trial):
        self.removed.append(trial)
        if trial in self.to_stop:
            self.to_stop.remove(trial)

    def choose_trial_to_run(self, tune_controller):
        for trial in tune_controller.get_trials():
            if trial.status == "PENDING" or (trial == self.worse and self._ready()):
                return trial
        return None


def test_python_scheduler_exploits_and_stops_waiting_trials(storage):
    import sqlite3
    scheduler = CloneTheBest()
    grid = tune.Tuner(trainables.pbt_member,
                      param_space={"lr": tune.grid_search([1.0, 100.0, 0.5])},
                      tune_config=tune.TuneConfig(metric="score", mode="max",
                                                  scheduler=scheduler),
                      run_config=run_config(storage, "clone")).fit()
    worse, donor, stopped = grid
    assert [r.status for r in grid] == ["TERMINATED"] * 3
    # The worse trial went on from the donor's weights with the new lr.
    assert worse.config["lr"] == 200.0
    assert worse.metrics["owner"] == donor.trial_id and worse.metrics["score"] == 200.0
    assert donor.metrics["owner"] == donor.trial_id
    with sqlite3.connect(os.path.join(storage, "clone", "experiment.db")) as db:
        rows = db.execute("SELECT trial_id, donor_id, json_extract(new_config, '$.lr') "
                          "FROM exploits").fetchall()
    assert rows == [(worse.trial_id, donor.trial_id, 200.0)]
    # The paused lr 0.5 trial ended where it waited, without running again.
    assert stopped.metrics["training_iteration"] == 1 and len(stopped.history) == 1
    assert [t.trial_id for t in scheduler.removed] == [stopped.trial_id]


class BadExploit(TrialScheduler):
    def on_trial_result(self, tune_controller, trial, result):
        return TrialScheduler.PAUSE

    def take_exploit(self, tune_controller, trial):
        return "nobody", {}


def test_python_scheduler_exploit_naming_no_trial_ends_fit(storage):
    with pytest.raises(ValueError, match="BadExploit.take_exploit returned 'nobody'"):
        tune.Tuner(trainables.stepper, param_space={"x": 1, "steps": 2},
                   tune_config=tune.TuneConfig(scheduler=BadExploit()),
                   run_config=run_config(storage, "bad_exploit")).fit()


class Raises(TrialScheduler):
    def on_trial_result(self, tune_controller, trial, result):
        raise KeyError("the scheduler broke")


class Undecided(TrialScheduler):
    def on_trial_result(self, tune_controller, trial, result):
        return "MAYBE"


def test_python_scheduler_errors_end_fit(storage):
    for scheduler, error, match in ((Raises(), KeyError, "the scheduler broke"),
                                    (Undecided(), ValueError, "returned 'MAYBE'")):
        with pytest.raises(error, match=match):
            tune.Tuner(trainables.stepper, param_space={"x": 1, "steps": 2},
                       tune_config=tune.TuneConfig(scheduler=scheduler),
                       run_config=run_config(storage, type(scheduler).__name__)).fit()


def test_not_a_plugin_is_refused(storage):
    with pytest.raises(ValueError, match="search_alg"):
        tune.Tuner(trainables.stepper, tune_config=tune.TuneConfig(search_alg=object()),
                   run_config=run_config(storage, "x"))
    with pytest.raises(ValueError, match="scheduler"):
        tune.Tuner(trainables.stepper, tune_config=tune.TuneConfig(scheduler="asha"),
                   run_config=run_config(storage, "x"))
