"""Search-space domains, as Ray Tune's tune.uniform & co.

Each domain is data ({"KIND": [ARGS]}, search/domain_spec.h); the C++ engine
samples it and checks its bounds (a bad bound is a ValueError naming the
param_space key when the Tuner is built); `.sample()` draws from the same
C++ code. tune.sample_from(func) runs func on the driver, called by the
engine with the GIL held, once per trial.
"""

import random

from tunerun import _tunerun


class Domain:
    """A hyperparameter's domain; the engine draws its values."""

    def __init__(self, kind, *args):
        self.kind = kind
        self.args = list(args)

    def _spec(self):
        return {self.kind: self.args}

    def sample(self, config=None, size=1, random_state=None):
        """As Ray's: one value, or a list of `size`. random_state: None, an int
        seed or a random.Random."""
        if self.kind == "grid_search":
            raise ValueError("grid_search is expanded into one trial per value, not sampled")
        if random_state is None:
            seed = random.getrandbits(64)
        elif isinstance(random_state, random.Random):
            seed = random_state.getrandbits(64)
        elif isinstance(random_state, int):
            seed = random_state % 2**64
        else:
            raise ValueError(f"random_state: expected None, an int or a random.Random, "
                             f"got {random_state!r}")
        values = _tunerun.sample_domain(self._spec(), size, seed)
        return values[0] if size == 1 else values

    def __repr__(self):
        return f"{self.kind}({', '.join(map(repr, self.args))})"

    def __eq__(self, other):
        return isinstance(other, Domain) and self._spec() == other._spec()


def uniform(lower, upper):
    return Domain("uniform", lower, upper)


def quniform(lower, upper, q):
    return Domain("quniform", lower, upper, q)


def loguniform(lower, upper, base=None):
    if base not in (None, 10):
        raise ValueError("loguniform: only base 10 (Ray's default) is supported")
    return Domain("loguniform", lower, upper)


def qloguniform(lower, upper, q, base=None):
    if base not in (None, 10):
        raise ValueError("qloguniform: only base 10 (Ray's default) is supported")
    return Domain("qloguniform", lower, upper, q)


def randn(mean=0.0, sd=1.0):
    return Domain("randn", mean, sd)


def qrandn(mean, sd, q):
    return Domain("qrandn", mean, sd, q)


def randint(lower, upper):
    """Integers in [lower, upper) (upper exclusive, as Ray 2.x)."""
    return Domain("randint", lower, upper)


def qrandint(lower, upper, q=1):
    return Domain("qrandint", lower, upper, q)


def lograndint(lower, upper, base=None):
    return Domain("lograndint", lower, upper)


def qlograndint(lower, upper, q, base=None):
    return Domain("qlograndint", lower, upper, q)


def choice(categories):
    return Domain("choice", *list(categories))


def grid_search(values):
    return Domain("grid_search", *list(values))


class _SpecView:
    """What Ray hands a sample_from function: spec.config (attribute access too)."""

    def __init__(self, config):
        self.config = _AttrDict(config)


class _AttrDict(dict):
    def __init__(self, values):
        super().__init__({k: _AttrDict(v) if isinstance(v, dict) else v
                          for k, v in values.items()})

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


class SampleFrom:
    """tune.sample_from(func): func(spec) with spec.config the trial's config
    as resolved so far (all plain values and domains; other sample_from keys
    before this one). It runs on the driver (lambdas are fine)."""

    def __init__(self, func):
        if not callable(func):
            raise ValueError(f"sample_from: expected a function, got {func!r}")
        self.func = func

    def _resolve(self, config):
        return self.func(_SpecView(config))

    def __repr__(self):
        return f"sample_from({getattr(self.func, '__qualname__', self.func)!r})"


def sample_from(func):
    return SampleFrom(func)


def _to_data(value):
    """Domains inside plug-in options (PBT's hyperparam_mutations) as data."""
    if isinstance(value, Domain):
        return value._spec()
    if isinstance(value, dict):
        return {k: _to_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_data(v) for v in value]
    if callable(value):
        raise ValueError("functions in plug-in options are not supported from Python "
                         "(use a domain or a list of values)")
    return value
