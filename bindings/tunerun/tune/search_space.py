"""Search-space domains, as Ray Tune's tune.uniform & co.

Each domain is data ({"KIND": [ARGS]}, search/domain_spec.h); the C++ engine
samples it and checks its bounds (a bad bound is a ValueError naming the
param_space key when the Tuner is built). Ray's `.sample()` and
tune.sample_from (a Python function per config) are not supported.
"""


class Domain:
    """A hyperparameter's domain; the engine draws its values."""

    def __init__(self, kind, *args):
        self.kind = kind
        self.args = list(args)

    def _spec(self):
        return {self.kind: self.args}

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
