"""ray.remote, ray.get, ray.put and ray.wait for the small helper tasks a
tuning script runs beside its trials: an in-process layer over a pool of
forked processes, not a distributed runtime. A remote function runs in a
pool process (its function and arguments travel by cloudpickle, so
closures and functions of the script work); a remote class (an actor)
lives in the driver and its methods run there, one at a time, at .remote().
ObjectRefs are futures; put() keeps its value in the driver. Resource
options (num_cpus, num_gpus, resources...) are accepted and have no effect:
the pool has one process per core. A task that raised makes get() raise
exceptions.RayTaskError, an instance of the task's exception type too,
holding its traceback, as Ray's."""

import concurrent.futures
import multiprocessing
from concurrent.futures.process import BrokenProcessPool
import os
import threading

_pool = None
_pool_lock = threading.Lock()


def _executor():
    global _pool
    with _pool_lock:
        if _pool is None:
            # fork: a pool process needs neither the script re-run (spawn
            # would import __main__) nor a module path for its functions.
            _pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=os.cpu_count() or 1, mp_context=multiprocessing.get_context("fork"))
        return _pool


def _run_pickled(payload):
    """In a pool process: (True, value) or (False, what RayTaskError needs), pickled."""
    import cloudpickle
    fn, args, kwargs = cloudpickle.loads(payload)
    try:
        return cloudpickle.dumps((True, fn(*args, **kwargs)))
    except Exception as error:
        return cloudpickle.dumps((False, _failure(getattr(fn, "__name__", "task"), error)))


def _failure(function_name, error):
    """What the caller's RayTaskError is made of: the exception (pickled if it
    pickles, else a RuntimeError with its text) and its traceback here."""
    import traceback
    import cloudpickle
    try:
        cause = cloudpickle.dumps(error)
    except Exception:
        cause = cloudpickle.dumps(RuntimeError(f"{type(error).__name__}: {error}"))
    return function_name, "".join(traceback.format_exception(error)), cause, os.getpid()


def _task_error(function_name, traceback_str, cause, pid):
    import cloudpickle
    from tunerun.exceptions import RayTaskError
    return RayTaskError(function_name, traceback_str, cloudpickle.loads(cause),
                        pid=pid).as_instanceof_cause()


class ObjectRef:
    """A value that is, or will be, ready: get() waits for it."""

    def __init__(self, future, pickled=False):
        self._future = future
        self._pickled = pickled

    def _result(self, timeout=None):
        try:
            value = self._future.result(timeout)
        except BrokenProcessPool as error:
            from tunerun.exceptions import WorkerCrashedError
            _drop_broken_pool()
            raise WorkerCrashedError(f"the process running the task died ({error})") from None
        if self._pickled:
            import cloudpickle
            ok, value = cloudpickle.loads(value)
            if not ok:
                raise _task_error(*value)
        return value

    def future(self):
        return self._future

    def __repr__(self):
        return f"ObjectRef({'ready' if self._future.done() else 'pending'})"


def _ready(value):
    future = concurrent.futures.Future()
    future.set_result(value)
    return ObjectRef(future)


def _failed(error):
    future = concurrent.futures.Future()
    future.set_exception(error)
    return ObjectRef(future)


def _resolve(value):
    """Ray passes an ObjectRef argument to a task as its value."""
    return get(value) if isinstance(value, ObjectRef) else value


class RemoteFunction:
    def __init__(self, fn, options):
        self._function = fn
        self._options = options
        self.__name__ = getattr(fn, "__name__", "remote_function")
        self.__doc__ = getattr(fn, "__doc__", None)

    def remote(self, *args, **kwargs):
        import cloudpickle
        from tunerun.exceptions import RayError
        try:
            args = tuple(_resolve(a) for a in args)
            kwargs = {k: _resolve(v) for k, v in kwargs.items()}
        except RayError as error:  # an argument's task failed: so does this one, at get()
            return _failed(error)
        payload = cloudpickle.dumps((self._function, args, kwargs))
        return ObjectRef(_executor().submit(_run_pickled, payload), pickled=True)

    def options(self, **options):
        return RemoteFunction(self._function, {**self._options, **options})

    def __call__(self, *args, **kwargs):
        raise TypeError(f"Remote functions cannot be called directly: use "
                        f"{self.__name__}.remote()")


class _ActorMethod:
    def __init__(self, actor, name):
        self._actor = actor
        self._name = name

    def remote(self, *args, **kwargs):
        from tunerun.exceptions import RayError
        try:
            args = tuple(_resolve(a) for a in args)
            kwargs = {k: _resolve(v) for k, v in kwargs.items()}
        except RayError as error:
            return _failed(error)
        with self._actor._lock:
            try:
                return _ready(getattr(self._actor._instance, self._name)(*args, **kwargs))
            except Exception as error:  # get() raises it as a RayTaskError, as Ray's
                name = f"{type(self._actor._instance).__name__}.{self._name}"
                return _failed(_task_error(*_failure(name, error)))

    def options(self, **_options):
        return self


class ActorHandle:
    def __init__(self, cls, args, kwargs):
        self._instance = cls(*(_resolve(a) for a in args),
                             **{k: _resolve(v) for k, v in kwargs.items()})
        self._lock = threading.Lock()

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if not callable(getattr(self._instance, name)):
            raise AttributeError(f"actor attribute {name!r} is not a method")
        return _ActorMethod(self, name)


class ActorClass:
    def __init__(self, cls, options):
        self._cls = cls
        self._options = options
        self.__name__ = cls.__name__

    def remote(self, *args, **kwargs):
        return ActorHandle(self._cls, args, kwargs)

    def options(self, **options):
        return ActorClass(self._cls, {**self._options, **options})


def remote(*args, **options):
    """@ray.remote, @ray.remote(num_cpus=...): a function becomes a task
    run in a pool process, a class an actor living in the driver."""
    def wrap(target):
        if isinstance(target, type):
            return ActorClass(target, options)
        if callable(target):
            return RemoteFunction(target, options)
        raise TypeError(f"ray.remote decorates a function or a class, not {target!r}")
    if len(args) == 1 and not options and callable(args[0]):
        return wrap(args[0])
    if args:
        raise TypeError("ray.remote takes a function or class, or keyword options only")
    return wrap


def put(value, **_options):
    """An ObjectRef holding `value` (kept in the driver, not copied)."""
    return _ready(value)


def get(refs, *, timeout=None):
    """The value of an ObjectRef, or of each of a list; raises the task's
    exception, and GetTimeoutError (a TimeoutError) past `timeout` seconds."""
    if isinstance(refs, (list, tuple)):
        return [get(r, timeout=timeout) for r in refs]
    if not isinstance(refs, ObjectRef):
        raise ValueError(f"ray.get takes an ObjectRef or a list of them, got "
                         f"{type(refs).__name__}")
    try:
        return refs._result(timeout)
    except concurrent.futures.TimeoutError:
        from tunerun.exceptions import GetTimeoutError
        raise GetTimeoutError(f"ray.get timed out after {timeout} s") from None


def wait(refs, *, num_returns=1, timeout=None, fetch_local=True):
    """(ready, not ready): the first num_returns refs to finish, in the
    order given, once they have or `timeout` seconds have passed."""
    refs = list(refs)
    if not 0 <= num_returns <= len(refs):
        raise ValueError(f"ray.wait: num_returns {num_returns} is not in 0..{len(refs)}")
    by_future = {r._future: r for r in refs}
    pending = set(by_future)
    done = set()
    deadline_left = timeout
    while len(done) < num_returns and pending:
        finished, pending = concurrent.futures.wait(
            pending, timeout=deadline_left, return_when=concurrent.futures.FIRST_COMPLETED)
        if not finished:
            break
        done |= finished
    ready = [r for r in refs if r._future in done][:num_returns]
    return ready, [r for r in refs if r not in ready]


def __getattr__(name):
    if name == "GetTimeoutError":  # ray.exceptions' name, once kept here
        from tunerun.exceptions import GetTimeoutError
        return GetTimeoutError
    raise AttributeError(name)


def _drop_broken_pool():
    global _pool
    with _pool_lock:
        if _pool is not None and getattr(_pool, "_broken", False):
            _pool.shutdown(wait=False, cancel_futures=True)
            _pool = None


def shutdown_pool():
    global _pool
    with _pool_lock:
        if _pool is not None:
            _pool.shutdown(wait=True, cancel_futures=True)
            _pool = None
