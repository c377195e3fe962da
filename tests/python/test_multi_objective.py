"""Several objectives from Python: TuneConfig(metric=[...], mode=[...]) with
the multi-objective searchers (also as Ray's OptunaSearch with several
metrics), ResultGrid asking which objective to judge by, and the Pareto
front it returns."""

import pytest

from tunerun import tune

import trainables


def fit(storage, name, search_alg, **tune_config):
    return tune.Tuner(
        trainables.two_objectives,
        param_space={"x": tune.uniform(0, 1), "y": tune.uniform(0, 1)},
        tune_config=tune.TuneConfig(search_alg=search_alg, num_samples=14, seed=3,
                                    **tune_config),
        run_config=tune.RunConfig(name=name, storage_path=storage, verbose=0)).fit()


def dominated(a, b):
    """Whether result b beats result a (acc max, latency_ms min)."""
    return (b["acc"] >= a["acc"] and b["latency_ms"] <= a["latency_ms"]
            and (b["acc"] > a["acc"] or b["latency_ms"] < a["latency_ms"]))


@pytest.mark.parametrize("searcher", [
    lambda: tune.search.MOTPESearch(n_startup_trials=6),
    lambda: tune.search.NSGA2Search(population_size=6),
], ids=["motpe", "nsga2"])
def test_the_front_holds_the_feasible_trials_no_other_beats(storage, searcher):
    grid = fit(storage, "mo", searcher(), metric=["acc", "latency_ms"], mode=["max", "min"])
    assert len(grid) == 14 and grid.num_errors == 0
    feasible = [r.metrics for r in grid if r.metrics["acc"] <= 0.8]
    expected = sorted(m["acc"] for m in feasible
                      if not any(dominated(m, other) for other in feasible))
    front = grid.get_pareto_front()
    assert sorted(r.metrics["acc"] for r in front) == expected


def test_get_best_result_asks_which_objective(storage):
    grid = fit(storage, "which", tune.search.MOTPESearch(n_startup_trials=6),
               metric=["acc", "latency_ms"], mode=["max", "min"])
    with pytest.raises(ValueError, match="several objectives, acc \\(max\\), latency_ms \\(min\\)"):
        grid.get_best_result()
    fastest = grid.get_best_result("latency_ms")  # that objective's mode: min
    assert fastest.metrics["latency_ms"] == min(r.metrics["latency_ms"] for r in grid)
    assert grid.get_best_result("acc", "min").metrics["acc"] == min(r.metrics["acc"] for r in grid)


def test_optuna_search_with_several_metrics_is_multi_objective(storage):
    searcher = tune.search.optuna.OptunaSearch(metric=["acc", "latency_ms"], mode=["max", "min"],
                                               seed=2)
    assert searcher._spec()["algorithm"] == "motpe"
    grid = fit(storage, "optuna", searcher)
    assert len(grid) == 14 and grid.get_pareto_front()


def test_a_single_objective_searcher_refuses_several_metrics(storage):
    with pytest.raises(ValueError, match="motpe"):
        fit(storage, "tpe", tune.search.TPESearch(), metric=["acc", "latency_ms"],
            mode=["max", "min"])


def test_mo_asha_stops_dominated_trials(storage):
    grid = tune.Tuner(
        trainables.two_objectives_per_step,
        param_space={"x": tune.uniform(0, 1), "y": tune.uniform(0, 1)},
        tune_config=tune.TuneConfig(metric=["acc", "latency_ms"], mode=["max", "min"],
                                    num_samples=10, seed=1,
                                    scheduler=tune.schedulers.MOASHAScheduler(
                                        max_t=8, grace_period=1, reduction_factor=2)),
        run_config=tune.RunConfig(name="moasha", storage_path=storage, verbose=0)).fit()
    iterations = [r.metrics["training_iteration"] for r in grid]
    assert len(grid) == 10 and grid.num_errors == 0
    assert min(iterations) < 8 and max(iterations) == 8


class _Grid(tune.search.Searcher):
    """A Python searcher for several objectives, as Ray's: set_search_properties
    gets the lists, on_trial_complete every metric; it suggests a grid and
    remembers what each trial reported."""

    def __init__(self):
        super().__init__()
        self.told = {}
        self.points = [{"x": x / 10, "y": 0.5} for x in range(1, 10)]

    def suggest(self, trial_id):
        return self.points.pop() if self.points else self.FINISHED

    def on_trial_complete(self, trial_id, result=None, error=False):
        self.told[trial_id] = {m: result[m] for m in self.metric}


def test_a_python_searcher_gets_the_metric_and_mode_lists_and_every_metric(storage):
    searcher = _Grid()
    grid = fit(storage, "custom", searcher, metric=["acc", "latency_ms"], mode=["max", "min"])
    assert searcher.metric == ["acc", "latency_ms"] and searcher.mode == ["max", "min"]
    assert len(grid) == 9 and grid.num_errors == 0
    assert sorted(t["acc"] for t in searcher.told.values()) == pytest.approx(
        [x / 10 for x in range(1, 10)])
    assert all(t["latency_ms"] == pytest.approx(10 * (t["acc"] + 0.5))
               for t in searcher.told.values())
    # x > 0.8 breaks the constraint: the front is the feasible trials, none dominated
    # (acc and latency both grow with x).
    assert sorted(r.metrics["acc"] for r in grid.get_pareto_front()) == pytest.approx(
        [x / 10 for x in range(1, 9)])


def test_optuna_search_takes_several_metrics_from_tune_config(storage):
    searcher = tune.search.optuna.OptunaSearch(seed=2)
    grid = fit(storage, "optuna_tc", searcher, metric=["acc", "latency_ms"], mode=["max", "min"])
    assert len(grid) == 14 and grid.num_errors == 0 and grid.get_pareto_front()


def test_optuna_define_by_run_search_with_several_metrics(storage):
    pytest.importorskip("optuna")

    def space(trial):
        trial.suggest_float("x", 0, 1)
        trial.suggest_float("y", 0, 1)

    searcher = tune.search.optuna.OptunaSearch(space, seed=4)
    grid = fit(storage, "optuna_dbr", searcher, metric=["acc", "latency_ms"], mode=["max", "min"])
    assert len(grid) == 14 and grid.num_errors == 0
    trials = searcher._study.trials
    assert len(trials) == 14 and all(len(t.values) == 2 for t in trials)
    assert [d.name for d in searcher._study.directions] == ["MAXIMIZE", "MINIMIZE"]
