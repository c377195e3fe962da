"""Ray Tune's search-space guide, with its documented outcomes: each
sampling function's bounds (randint's upper bound excluded, the q-variants'
included and rounded to multiples of q), sample_from reading other values
of the same config, grid_search's cartesian product repeated num_samples
times, and nested spaces."""

import pytest

from tunerun import tune

import ray_trainables

DRAWS = 2000


def draws(domain):
    return domain.sample(size=DRAWS, random_state=7)


def test_uniform_and_quniform():
    values = draws(tune.uniform(-5, -1))
    assert all(-5 <= v < -1 for v in values)
    rounded = draws(tune.quniform(-5, -1, 0.5))
    assert all(-5 <= v <= -1 and abs(v / 0.5 - round(v / 0.5)) < 1e-9 for v in rounded)


def test_loguniform_spans_its_decades():
    values = draws(tune.loguniform(1e-4, 1e-2))
    assert all(1e-4 <= v < 1e-2 for v in values)
    # Log-uniform: as many draws below 1e-3 as above it (within noise).
    below = sum(v < 1e-3 for v in values)
    assert 0.4 * DRAWS < below < 0.6 * DRAWS


def test_randint_excludes_its_upper_bound_and_qrandint_includes_it():
    assert set(draws(tune.randint(-9, 15))) == set(range(-9, 15))
    assert set(draws(tune.qrandint(-21, 12, 3))) == set(range(-21, 13, 3))
    assert set(draws(tune.lograndint(1, 10))) <= set(range(1, 10))
    assert 10 not in draws(tune.lograndint(1, 10))
    assert set(draws(tune.qlograndint(2, 10, 2))) == {2, 4, 6, 8, 10}


def test_integer_quantized_bounds_need_not_be_multiples_of_q():
    # The search-space guide's own example: log-uniform in [1, 10], multiples of 2.
    assert set(draws(tune.qlograndint(1, 10, 2))) == {2, 4, 6, 8, 10}
    assert set(draws(tune.qrandint(-20, 13, 3))) == set(range(-18, 13, 3))


def test_choice_draws_every_category():
    assert set(draws(tune.choice(["a", "b", "c"]))) == {"a", "b", "c"}


def test_grid_search_is_a_product_repeated_num_samples_times(storage):
    grid = tune.Tuner(
        ray_trainables.returns_score,
        param_space={"a": tune.grid_search([1, 2, 3]), "b": tune.grid_search([0, 10])},
        tune_config=tune.TuneConfig(num_samples=2),
        run_config=tune.RunConfig(name="grid", storage_path=storage, verbose=0)).fit()
    cells = sorted((r.config["a"], r.config["b"]) for r in grid)
    assert cells == sorted([(a, b) for a in (1, 2, 3) for b in (0, 10)] * 2)


def test_sample_from_reads_the_config_it_is_part_of(storage):
    # The guide's "conditional search spaces": b depends on a, nested keys too.
    grid = tune.Tuner(
        ray_trainables.returns_score,
        param_space={"a": tune.randint(1, 100),
                     "b": tune.sample_from(lambda spec: -spec.config.a),
                     "nested": {"c": tune.choice([5, 6]),
                                "d": tune.sample_from(lambda spec: spec.config.nested.c * 2)}},
        tune_config=tune.TuneConfig(num_samples=5),
        run_config=tune.RunConfig(name="conditional", storage_path=storage, verbose=0)).fit()
    assert len(grid) == 5 and grid.num_errors == 0
    for result in grid:
        config = result.config
        assert config["b"] == -config["a"]
        assert config["nested"]["d"] == 2 * config["nested"]["c"]
        assert result.metrics["score"] == config["a"] ** 2 - config["a"]


def test_grid_search_is_not_sampled():
    with pytest.raises(ValueError, match="grid_search"):
        tune.grid_search([1, 2]).sample()
