"""tune.register_trainable: a name for a function or tune.Trainable class,
so that tune.run("name"), Tuner("name") and Experiment(run="name") find it,
as Ray's registry does. The registry lives in the driver: workers import
the trainable itself (by module and name), never the registered name."""

_TRAINABLES = {}


def register_trainable(name, trainable, warn=True):
    """Registers `trainable` (a function or tune.Trainable class) as `name`;
    registering a name again replaces it, as Ray's."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_trainable: the name must be a non-empty string, got {name!r}")
    if not callable(trainable):
        raise TypeError(f"register_trainable({name!r}): expected a function or Trainable "
                        f"class, got {type(trainable).__name__}")
    _TRAINABLES[name] = trainable


def resolve_trainable(trainable):
    """`trainable` itself, or the one registered under it when it is a name."""
    if not isinstance(trainable, str):
        return trainable
    try:
        return _TRAINABLES[trainable]
    except KeyError:
        known = ", ".join(sorted(_TRAINABLES)) or "none"
        raise ValueError(f"no trainable is registered as {trainable!r} (registered: {known}); "
                         "call tune.register_trainable(name, function) first") from None
