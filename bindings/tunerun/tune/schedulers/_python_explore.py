"""The part of PBT's explore step that runs in Python: hyperparam_mutations
entries that are functions (`lambda: random.uniform(0.9, 1.0)`) or
sample_from objects, then the user's custom_explore_fn. The C++ PBT explores
the other entries first and hands this the result (bindings/plugins_py.cpp).

For a function entry, as Ray's PBT: with probability resample_probability
(or when the config lacks the key) the function is called for a fresh
value; otherwise the value is multiplied by one of perturbation_factors and
stays an int when it was one."""

import random as _random

from tunerun.tune.search_space import Domain, SampleFrom


def is_python_only(value):
    return isinstance(value, SampleFrom) or (callable(value) and not isinstance(value, Domain))


def split_mutations(mutations):
    """(data, functions): the entries the C++ PBT reads, and the function
    entries, each nested as given."""
    data, functions = {}, {}
    for key, value in (mutations or {}).items():
        if isinstance(value, dict):
            nested_data, nested_functions = split_mutations(value)
            if nested_data:
                data[key] = nested_data
            if nested_functions:
                functions[key] = nested_functions
        elif is_python_only(value):
            functions[key] = value
        else:
            data[key] = value
    return data, functions


class PythonExplore:
    """config dict -> config dict, called by the C++ PBT with the GIL held."""

    def __init__(self, functions, resample_probability, perturbation_factors,
                 custom_explore_fn, seed):
        self._functions = functions
        self._resample_probability = resample_probability
        self._factors = list(perturbation_factors)
        self._custom = custom_explore_fn
        # Ray draws from the global `random`; a seed gives PBT its own stream.
        self._rng = _random if seed is None else _random.Random(seed)

    def _draw(self, function, config):
        if isinstance(function, SampleFrom):
            return function._resolve(config)
        return function()

    def _explore(self, config, functions, whole):
        for key, function in functions.items():
            if isinstance(function, dict):
                inner = config.get(key)
                config[key] = self._explore(dict(inner) if isinstance(inner, dict) else {},
                                            function, whole)
            elif key not in config or self._rng.random() < self._resample_probability:
                config[key] = self._draw(function, whole)
            else:
                value = config[key] * self._rng.choice(self._factors)
                config[key] = int(value) if isinstance(config[key], int) else value
        return config

    def __call__(self, config):
        config = self._explore(config, self._functions, config)
        if self._custom is not None:
            config = self._custom(config)
            if not isinstance(config, dict):
                raise ValueError("PopulationBasedTraining: custom_explore_fn must return the "
                                 f"config dict, got {config!r}")
        return config
