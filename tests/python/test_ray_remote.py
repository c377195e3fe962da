"""ray.remote, ray.get, ray.put, ray.wait (tunerun/_remote.py): tasks run in
pool processes, actors in the driver; an error raises in the caller at
get(), as Ray's RayTaskError: an instance of the task's exception type
holding the task's traceback."""

import os
import time

import pytest

import tunerun as ray
from tunerun.exceptions import GetTimeoutError, RayTaskError, WorkerCrashedError


@pytest.fixture(autouse=True)
def fresh_pool():
    yield
    ray.shutdown()


class CustomError(Exception):
    pass


def test_a_task_runs_in_another_process_and_takes_closures():
    offset = 10

    @ray.remote
    def add(x):
        return x + offset, os.getpid()

    value, pid = ray.get(add.remote(5))
    assert value == 15 and pid != os.getpid()
    assert [v for v, _ in ray.get([add.remote(i) for i in range(4)])] == [10, 11, 12, 13]
    with pytest.raises(TypeError, match=r"use add\.remote\(\)"):
        add(1)


def test_put_refs_are_passed_as_their_values():
    @ray.remote(num_cpus=1)
    def total(values, scale=1):
        return sum(values) * scale

    data = ray.put([1, 2, 3])
    assert ray.get(data) == [1, 2, 3]
    assert ray.get(total.remote(data, scale=ray.put(2))) == 12
    assert ray.get(total.options(num_cpus=2).remote([4])) == 4


def test_wait_returns_the_finished_refs_first():
    @ray.remote
    def sleep_then(seconds, value):
        time.sleep(seconds)
        return value

    slow = sleep_then.remote(5, "slow")
    fast = sleep_then.remote(0, "fast")
    ready, pending = ray.wait([slow, fast], num_returns=1, timeout=4)
    assert ray.get(ready) == ["fast"] and pending == [slow]
    ready, pending = ray.wait([fast], num_returns=1)
    assert ready == [fast] and pending == []
    with pytest.raises(ValueError, match="num_returns 3 is not in 0..2"):
        ray.wait([slow, fast], num_returns=3)
    with pytest.raises(GetTimeoutError, match="timed out after 0.1 s"):
        ray.get(slow, timeout=0.1)
    assert issubclass(GetTimeoutError, TimeoutError)


def test_a_task_error_raises_in_the_caller_as_ray_task_error():
    @ray.remote
    def broken(x):
        raise ValueError(f"bad input {x}")

    ref = broken.remote(3)
    with pytest.raises(ValueError) as caught:
        ray.get(ref)
    error = caught.value
    assert isinstance(error, RayTaskError) and isinstance(error, ray.exceptions.RayError)
    assert isinstance(error.cause, ValueError) and str(error.cause) == "bad input 3"
    text = str(error)
    assert text.startswith("ValueError(): ray::broken() (pid=")
    assert "in broken" in text and "ValueError: bad input 3" in text  # the task's traceback
    assert error.pid != os.getpid()
    # A task given the failed ref fails with the same error, at get(), as Ray's.

    @ray.remote
    def after(value):
        return value

    with pytest.raises(ValueError, match="bad input 3"):
        ray.get(after.remote(ref))


def test_an_error_of_the_scripts_own_type_and_one_that_does_not_pickle():
    @ray.remote
    def custom():
        raise CustomError("mine")

    with pytest.raises(CustomError, match="mine"):
        ray.get(custom.remote())

    @ray.remote
    def unpicklable():
        import threading

        class Holding(Exception):
            def __init__(self):
                super().__init__("holds a lock")
                self.lock = threading.Lock()

        raise Holding()

    with pytest.raises(RayTaskError, match="Holding: holds a lock"):
        ray.get(unpicklable.remote())


def test_a_task_whose_process_dies_is_a_worker_crashed_error():
    @ray.remote
    def die():
        os._exit(3)

    with pytest.raises(WorkerCrashedError):
        ray.get(die.remote())

    @ray.remote
    def fine():
        return 1

    assert ray.get(fine.remote()) == 1  # a new pool


def test_actors_keep_state_and_raise_at_get():
    @ray.remote
    class Counter:
        def __init__(self, start):
            self.value = start

        def add(self, n):
            if n < 0:
                raise ValueError("negative")
            self.value += n
            return self.value

    counter = Counter.remote(ray.put(5))
    refs = [counter.add.remote(i) for i in range(1, 4)]
    assert ray.get(refs) == [6, 8, 11]
    failed = counter.add.remote(-1)
    with pytest.raises(ValueError, match="negative") as caught:
        ray.get(failed)
    assert isinstance(caught.value, RayTaskError)
    assert "ray::Counter.add()" in str(caught.value)
    assert ray.get(counter.add.remote(0)) == 11  # the actor goes on


def test_get_refuses_what_is_not_a_ref():
    with pytest.raises(ValueError, match="takes an ObjectRef or a list of them, got int"):
        ray.get(3)
