"""ray.exceptions for scripts written for Ray: what ray.get raises.

A task or actor method that raised makes ray.get raise RayTaskError, as
Ray's does: an instance of RayTaskError and of the task's own exception
type (`except ValueError` catches it), whose text names the task and holds
its traceback from the process it ran in; `.cause` is the exception itself."""

import os


class RayError(Exception):
    """Ray's base of the errors ray.get raises."""


class RayTaskError(RayError):
    """A task (or actor method) raised `cause`; its traceback is
    traceback_str, from the process it ran in (pid)."""

    def __init__(self, function_name, traceback_str, cause, proctitle=None, pid=None,
                 ip="127.0.0.1"):
        self.function_name = function_name
        self.traceback_str = traceback_str
        self.cause = cause
        self.proctitle = proctitle or f"ray::{function_name}()"
        self.pid = pid if pid is not None else os.getpid()
        self.ip = ip
        super().__init__(self._text())

    def _text(self):
        return (f"{type(self.cause).__name__}(): {self.proctitle} (pid={self.pid}, ip={self.ip})"
                f"\n{self.traceback_str.rstrip()}")

    def __str__(self):
        return self._text()

    def as_instanceof_cause(self):
        """This error as an instance of RayTaskError and of the cause's type
        (RayTaskError alone when the two cannot be one class)."""
        cause_type = type(self.cause)
        if not isinstance(self.cause, Exception) or issubclass(cause_type, RayTaskError):
            return self
        try:
            cls = _classes.get(cause_type)
            if cls is None:
                cls = type(f"RayTaskError({cause_type.__name__})", (RayTaskError, cause_type),
                           {"__module__": __name__, "__str__": RayTaskError.__str__,
                            "__init__": _plain_init})
                _classes[cause_type] = cls
            error = cls.__new__(cls)
            RayTaskError.__init__(error, self.function_name, self.traceback_str, self.cause,
                                  self.proctitle, self.pid, self.ip)
            error.args = (self._text(),)
            return error
        except TypeError:  # layouts that cannot share a class (some C exceptions)
            return self


def _plain_init(self, *args, **kwargs):
    Exception.__init__(self, *args)


_classes = {}


class GetTimeoutError(RayError, TimeoutError):
    """ray.get(timeout=) passed before the value was ready."""


class WorkerCrashedError(RayError):
    """The process running a task died before it returned (os._exit, a signal)."""


class RayActorError(RayError):
    """The actor could not run the method (its constructor raised)."""
