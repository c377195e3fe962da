"""Ray's tune.error: TuneError, and TrialError, what Result.error and
ResultGrid.errors hold for a trial that ended in ERROR."""


class TuneError(Exception):
    """Ray's TuneError: tune.run raises it when a trial ended in ERROR
    (raise_on_failed_trial=True, the default)."""


class TrialError(TuneError, RuntimeError):
    """A trial that ended in ERROR; its message is the trial's error. When a
    rank raised a Python exception, Result.error is an instance of this
    class and of the exception's type (isinstance(error, ValueError) holds,
    as with Ray's RayTaskError), and its text ends with the rank's
    traceback; the exception itself is `cause`."""

    cause = None
    traceback = ""


def trial_error(message, record):
    """The exception of a trial whose error is `message`, from the record a
    rank wrote when it raised (_worker._save_error), or None."""
    if record is None:
        return TrialError(message)
    text = f"{message}\n\n{record['traceback']}".rstrip()
    cause = None
    if record.get("exception") is not None:
        import pickle
        try:
            cause = pickle.loads(record["exception"])
        except Exception:
            cause = None
    cls = TrialError
    if isinstance(cause, Exception) and not isinstance(cause, TrialError):
        cls = _as_instance_of(type(cause))
    error = cls.__new__(cls, text)
    error.args = (text,)
    error.cause = cause
    error.traceback = record["traceback"]
    return error


def _str(self):
    return self.args[0]


_classes = {}


def _as_instance_of(cause_type):
    """TrialError and `cause_type` in one class (TrialError alone when their
    layouts clash, as OSError's and a C extension's may)."""
    if cause_type not in _classes:
        try:
            _classes[cause_type] = type(f"TrialError({cause_type.__name__})",
                                        (TrialError, cause_type),
                                        {"__str__": _str, "__module__": __name__})
        except TypeError:
            _classes[cause_type] = TrialError
    return _classes[cause_type]
