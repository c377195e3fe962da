"""Any Python value where Ray takes one, over configs the engine keeps as
JSON: the param_space's constants that are not JSON values (numpy arrays,
dataclasses, ScalingConfig, Checkpoint, any object) become placeholders
{OBJECT: index} into a list of the objects, written with the trainable
(_reference.OBJECTS_FILE) and put back in each trial's config in the rank
and in Result.config; a list holding domains becomes a dict the engine
samples ({LIST: True, "0": ..., "1": ...}) and a list again. numpy scalars
become Python numbers. Reported values that are not JSON (as_metrics) are
kept as JSON where they convert, else as their text, as Ray's result files
keep them.
"""

OBJECT = "__tunerun_object__"
LIST = "__tunerun_list__"
_LEAVES = (str, bool, int, float, type(None))


def _is_domain(value):
    from tunerun.tune.search_space import Domain, SampleFrom
    return isinstance(value, (Domain, SampleFrom))


def _is_numpy_scalar(value):
    return (hasattr(value, "dtype") and hasattr(value, "item")
            and getattr(value, "shape", None) == ())


def _holds_domain(value):
    if _is_domain(value):
        return True
    if isinstance(value, dict):
        return any(_holds_domain(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds_domain(v) for v in value)
    return False


class Encoder:
    """encode_space(param_space) -> what the engine takes; .objects the values
    the placeholders stand for."""

    def __init__(self):
        self.objects = []

    def space(self, value, where):
        from tunerun.tune.search_space import Domain, SampleFrom
        if isinstance(value, Domain):
            if value.kind in ("grid_search", "choice"):
                return Domain(value.kind, *[self.constant(v, f"{where}[{i}]")
                                            for i, v in enumerate(value.args)])
            return value
        if isinstance(value, SampleFrom):
            return value
        if isinstance(value, dict):
            return {k: self.space(v, f"{where}.{k}") for k, v in value.items()}
        if isinstance(value, (list, tuple)) and _holds_domain(value):
            return {LIST: True, **{str(i): self.space(v, f"{where}[{i}]")
                                   for i, v in enumerate(value)}}
        return self.constant(value, where)

    def constant(self, value, where):
        if isinstance(value, _LEAVES):
            if isinstance(value, int) and not isinstance(value, bool) and \
                    not -2**63 <= value < 2**63:
                return self._object(value, where)
            return value
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return {k: self.constant(v, f"{where}.{k}") for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.constant(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if _is_numpy_scalar(value):
            return value.item()
        if _is_domain(value):
            raise ValueError(f"{where}: a domain inside grid_search or choice values is not "
                             "sampled; give the values themselves")
        return self._object(value, where)

    def _object(self, value, where):
        import dataclasses
        if dataclasses.is_dataclass(value) and any(
                _holds_domain(getattr(value, f.name)) for f in dataclasses.fields(value)):
            raise ValueError(f"{where}: the domains inside this {type(value).__name__} are not "
                             "sampled (only those in dicts and lists are); give its fields "
                             "as values")
        self.objects.append(value)
        return {OBJECT: len(self.objects) - 1}


def decode(value, objects):
    """A config with the placeholders replaced by `objects`' values."""
    if isinstance(value, dict):
        if OBJECT in value and len(value) == 1:
            return objects[value[OBJECT]]
        if value.get(LIST) is True:
            return [decode(value[str(i)], objects) for i in range(len(value) - 1)]
        return {k: decode(v, objects) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v, objects) for v in value]
    return value


def as_metrics(value):
    """`value` (a reported dict) as JSON: numpy values as numbers and lists,
    tuples as lists, keys as text, anything else as its str()."""
    if isinstance(value, _LEAVES):
        if isinstance(value, int) and not isinstance(value, bool) and \
                not -2**63 <= value < 2**63:
            return str(value)
        return value
    if isinstance(value, dict):
        return {str(k): as_metrics(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_metrics(v) for v in value]
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # numpy, torch
        try:
            return as_metrics(value.tolist())
        except Exception:
            pass
    return str(value)
