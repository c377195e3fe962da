"""Ray Tune's search-algorithm and scheduler guides, as a Ray user imports
them: tune.search and tune.schedulers with Ray's submodules, the searchers
named after libraries taking Ray's constructor arguments (metric=, mode=,
space=, points_to_evaluate=)."""

import importlib

import pytest

from tunerun import tune

import ray_trainables
import trainables


def run_config(storage, name):
    return tune.RunConfig(name=name, storage_path=storage, verbose=0)


@pytest.mark.parametrize("path, name", [
    ("tunerun.tune.search.basic_variant", "BasicVariantGenerator"),
    ("tunerun.tune.search.optuna", "OptunaSearch"),
    ("tunerun.tune.search.hyperopt", "HyperOptSearch"),
    ("tunerun.tune.search.bayesopt", "BayesOptSearch"),
    ("tunerun.tune.search.bohb", "TuneBOHB"),
    ("tunerun.tune.search.concurrency_limiter", "ConcurrencyLimiter"),
    ("tunerun.tune.search.repeater", "Repeater"),
    ("tunerun.tune.search.searcher", "Searcher"),
    ("tunerun.tune.schedulers.pb2", "PB2"),
    ("tunerun.tune.schedulers.hb_bohb", "HyperBandForBOHB"),
    ("tunerun.tune.schedulers.async_hyperband", "ASHAScheduler"),
    ("tunerun.tune.schedulers.hyperband", "HyperBandScheduler"),
    ("tunerun.tune.schedulers.median_stopping_rule", "MedianStoppingRule"),
    ("tunerun.tune.schedulers.pbt", "PopulationBasedTraining"),
    ("tunerun.tune.schedulers.trial_scheduler", "TrialScheduler"),
])
def test_ray_s_module_paths_import(path, name):
    cls = getattr(importlib.import_module(path), name)
    package = path.rsplit(".", 1)[0]
    assert getattr(importlib.import_module(package), name) is cls


@pytest.mark.parametrize("make", [
    lambda space: tune.search.optuna.OptunaSearch(space=space, metric="score", mode="max",
                                                  seed=3),
    lambda space: tune.search.hyperopt.HyperOptSearch(space=space, metric="score", mode="max",
                                                      n_initial_points=2,
                                                      random_state_seed=3),
    lambda space: tune.search.bayesopt.BayesOptSearch(space=space, metric="score", mode="max",
                                                      random_search_steps=2),
], ids=["optuna", "hyperopt", "bayesopt"])
def test_library_searchers_take_space_metric_and_mode(storage, make):
    # Ray's guides give the space and the metric to the searcher, none to TuneConfig.
    searcher = make({"x": tune.uniform(0, 6)})
    grid = tune.Tuner(ray_trainables.parabola, param_space={"steps": 2},
                      tune_config=tune.TuneConfig(search_alg=searcher, num_samples=5),
                      run_config=run_config(storage, "lib")).fit()
    assert len(grid) == 5 and grid.num_errors == 0
    assert all(0 <= r.config["x"] <= 6 and r.config["steps"] == 2 for r in grid)
    best = grid.get_best_result(metric="score", mode="max")
    assert best.metrics["score"] == max(r.metrics["score"] for r in grid)


def test_points_to_evaluate_come_first(storage):
    searcher = tune.search.optuna.OptunaSearch(points_to_evaluate=[{"x": 3.0}, {"x": 5.0}])
    grid = tune.Tuner(ray_trainables.parabola, param_space={"x": tune.uniform(0, 6), "steps": 1},
                      tune_config=tune.TuneConfig(metric="score", mode="max", search_alg=searcher,
                                                  num_samples=3),
                      run_config=run_config(storage, "points")).fit()
    xs = sorted((r.trial_id, r.config["x"]) for r in grid)
    assert [x for _, x in xs[:2]] == [3.0, 5.0]


def test_a_searcher_s_space_and_param_space_domains_conflict(storage):
    searcher = tune.search.hyperopt.HyperOptSearch(space={"x": tune.uniform(0, 1)},
                                                   metric="score", mode="max")
    with pytest.raises(ValueError, match="param_space"):
        tune.Tuner(ray_trainables.parabola, param_space={"x": tune.uniform(0, 1)},
                   tune_config=tune.TuneConfig(search_alg=searcher),
                   run_config=run_config(storage, "both"))


def test_a_searcher_s_metric_must_agree_with_tune_config(storage):
    searcher = tune.search.optuna.OptunaSearch(metric="score", mode="max")
    with pytest.raises(ValueError, match="metric"):
        tune.Tuner(ray_trainables.parabola, param_space={"x": tune.uniform(0, 1)},
                   tune_config=tune.TuneConfig(metric="loss", mode="min", search_alg=searcher),
                   run_config=run_config(storage, "twice"))


def test_bohb_with_hyperband_for_bohb(storage):
    # Ray's BOHB example: TuneBOHB paired with HyperBandForBOHB, a trainable
    # that checkpoints (HyperBand pauses trials at its milestones).
    grid = tune.Tuner(
        trainables.stepper,
        param_space={"x": tune.uniform(0, 6), "steps": 9},
        tune_config=tune.TuneConfig(
            metric="loss", mode="min", num_samples=6,
            search_alg=tune.search.bohb.TuneBOHB(seed=1),
            scheduler=tune.schedulers.HyperBandForBOHB(time_attr="training_iteration",
                                                       max_t=9, reduction_factor=3)),
        run_config=run_config(storage, "bohb")).fit()
    assert len(grid) == 6 and grid.num_errors == 0
    iterations = [r.metrics["training_iteration"] for r in grid]
    assert max(iterations) <= 9
    assert min(iterations) < 9  # HyperBand stopped some early


def test_pb2_explores_within_its_bounds(storage):
    grid = tune.Tuner(
        trainables.pbt_member,
        param_space={"lr": tune.grid_search([1.0, 100.0])},
        tune_config=tune.TuneConfig(
            metric="score", mode="max",
            scheduler=tune.schedulers.pb2.PB2(time_attr="training_iteration",
                                              perturbation_interval=2, quantile_fraction=0.5,
                                              hyperparam_bounds={"lr": [50.0, 200.0]},
                                              seed=1)),
        run_config=run_config(storage, "pb2")).fit()
    worse = next(r for r in grid if r.history[0]["score"] == 1.0)
    best = next(r for r in grid if r is not worse)
    # The worse trial took the better one's checkpoint and an lr within the bounds.
    assert worse.metrics["owner"] == best.trial_id
    assert 50.0 <= worse.config["lr"] <= 200.0


def test_pbt_mutates_with_functions_and_custom_explore_fn(storage):
    # Ray's pbt_example: hyperparam_mutations holds lambdas; custom_explore_fn
    # then sees (and may fix) every explored config.
    import random
    seen = []

    def explore(config):
        seen.append(dict(config))
        config["explored"] = True
        return config

    grid = tune.Tuner(
        trainables.pbt_member,
        param_space={"lr": tune.grid_search([1.0, 100.0]), "momentum": 0.5},
        tune_config=tune.TuneConfig(
            metric="score", mode="max",
            scheduler=tune.schedulers.PopulationBasedTraining(
                time_attr="training_iteration", perturbation_interval=2, quantile_fraction=0.5,
                resample_probability=1.0,
                hyperparam_mutations={"lr": lambda: random.uniform(300.0, 400.0),
                                      "momentum": tune.sample_from(lambda _: 0.9)},
                custom_explore_fn=explore, seed=1)),
        run_config=run_config(storage, "pbt_functions")).fit()
    assert grid.num_errors == 0
    worse = next(r for r in grid if r.history[0]["score"] == 1.0)
    best = next(r for r in grid if r is not worse)
    # The worse trial took the better one's checkpoint and a freshly drawn lr.
    assert worse.metrics["owner"] == best.trial_id
    assert 300.0 <= worse.config["lr"] <= 400.0
    assert worse.config["momentum"] == 0.9 and worse.config["explored"] is True
    assert seen and all(300.0 <= c["lr"] <= 400.0 for c in seen)


def test_pbt_perturbs_a_function_entry_and_keeps_ints():
    from tunerun.tune.schedulers._python_explore import PythonExplore
    explore = PythonExplore({"batch": lambda: 7, "lr": lambda: 0.5}, resample_probability=0.0,
                            perturbation_factors=(2.0,), custom_explore_fn=None, seed=0)
    assert explore({"batch": 16, "lr": 0.1}) == {"batch": 32, "lr": 0.2}
    # A key the config lacks is drawn, whatever the probability.
    assert explore({"lr": 0.1})["batch"] == 7


def test_pbt_custom_explore_fn_must_return_the_config(storage):
    with pytest.raises(ValueError, match="custom_explore_fn"):
        tune.schedulers.PopulationBasedTraining(custom_explore_fn="not a function")
    from tunerun.tune.schedulers._python_explore import PythonExplore
    explore = PythonExplore({}, 0.25, (1.2, 0.8), lambda config: None, seed=0)
    with pytest.raises(ValueError, match="must return the config dict"):
        explore({"lr": 1.0})


def test_basic_variant_generator_takes_ray_s_arguments(storage):
    searcher = tune.search.basic_variant.BasicVariantGenerator(
        points_to_evaluate=[{"x": 1.5}], max_concurrent=1, random_state=2)
    grid = tune.Tuner(ray_trainables.parabola, param_space={"x": tune.uniform(0, 6), "steps": 1},
                      tune_config=tune.TuneConfig(search_alg=searcher, num_samples=3),
                      run_config=run_config(storage, "bvg")).fit()
    assert grid.num_errors == 0
    assert 1.5 in [r.config["x"] for r in grid]


def test_concurrency_limiter_refuses_batches():
    with pytest.raises(ValueError, match="batch"):
        tune.search.ConcurrencyLimiter(tune.search.optuna.OptunaSearch(), max_concurrent=2,
                                       batch=True)


def define_by_run_space(trial):
    # Ray's define-by-run example: a conditional parameter and constants.
    activation = trial.suggest_categorical("activation", ["relu", "tanh"])
    trial.suggest_float("x", -2.0, 8.0)
    if activation == "relu":
        trial.suggest_float("mult", 1.0, 2.0)
    return {"steps": 1}


def test_optuna_define_by_run_space(storage):
    pytest.importorskip("optuna")
    searcher = tune.search.optuna.OptunaSearch(space=define_by_run_space, metric="score",
                                               mode="max", seed=3)
    grid = tune.Tuner(ray_trainables.parabola,
                      tune_config=tune.TuneConfig(search_alg=searcher, num_samples=12),
                      run_config=run_config(storage, "define_by_run")).fit()
    configs = [r.config for r in grid]
    assert len(configs) == 12 and all(c["steps"] == 1 for c in configs)
    # The conditional parameter is there exactly when its condition holds.
    assert all(("mult" in c) == (c["activation"] == "relu") for c in configs)
    assert {c["activation"] for c in configs} == {"relu", "tanh"}
    assert all(-2.0 <= c["x"] <= 8.0 for c in configs)
    # The study was told every trial's final result.
    told = sorted(t.value for t in searcher._study.trials if t.state.name == "COMPLETE")
    assert told == pytest.approx(sorted(r.metrics["score"] for r in grid))


def test_optuna_define_by_run_needs_a_metric_and_valid_returns(storage):
    pytest.importorskip("optuna")
    searcher = tune.search.optuna.OptunaSearch(space=lambda trial: [1])
    with pytest.raises(Exception, match="metric and mode|dict of constants"):
        tune.Tuner(ray_trainables.parabola,
                   tune_config=tune.TuneConfig(search_alg=searcher, metric="score", mode="max",
                                               num_samples=1),
                   run_config=run_config(storage, "bad_define_by_run")).fit()


def test_pb2_over_the_example_pbt_function(storage):
    # Ray's pb2_example imports its trainable from tune.examples.pbt_function.
    from tunerun.tune.examples.pbt_function import pbt_function
    from tunerun.tune.schedulers.pb2 import PB2
    scheduler = PB2(time_attr="training_iteration", perturbation_interval=2,
                    hyperparam_bounds={"lr": [0.0001, 0.02]})
    grid = tune.Tuner(
        pbt_function,
        param_space={"lr": 0.0001, "checkpoint_interval": 2},
        tune_config=tune.TuneConfig(scheduler=scheduler, metric="mean_accuracy", mode="max",
                                    num_samples=4),
        run_config=tune.RunConfig(name="pb2_example", storage_path=storage, verbose=0,
                                  stop={"training_iteration": 30})).fit()
    assert grid.num_errors == 0
    # Each ran to the stop; a trial that cloned a donor further ahead resumed
    # from its iteration and may end one past it, as in Ray.
    assert all(30 <= r.metrics["training_iteration"] <= 31 for r in grid)
    # PB2 moved lr off its start value, inside its bounds: the lrs the trials
    # ran with (an exploited trial may later be given 0.0001 again).
    lrs = {lr for r in grid for lr in r.metrics_dataframe["cur_lr"]}
    assert lrs != {0.0001} and all(0.0001 <= lr <= 0.02 for lr in lrs)
