# After Ray Core's "Task Fault Tolerance" guide, catching application errors
# (doc/source/ray-core/fault_tolerance/tasks.rst,
# doc/source/ray-core/doc_code/task_exceptions.py): an exception in a task
# reaches ray.get as RayTaskError, which is also the task's own exception
# type; a task given a failed task's result fails with the same error.
import tunerun as ray

ray.init()


@ray.remote
def f():
    raise Exception("the real error")


@ray.remote
def g(x):
    return


try:
    ray.get(f.remote())
except ray.exceptions.RayTaskError as e:
    print(e)
    assert "ray::f()" in str(e) and "Exception: the real error" in str(e)
else:
    raise AssertionError("ray.get returned")

try:
    ray.get(g.remote(f.remote()))
except ray.exceptions.RayTaskError as e:
    print(e)
    assert "the real error" in str(e)
else:
    raise AssertionError("ray.get returned")


class MyException(Exception):
    pass


@ray.remote
def raises_my_exc():
    raise MyException("a user exception")


try:
    ray.get(raises_my_exc.remote())
except MyException as e:
    print(e)
    assert isinstance(e, ray.exceptions.RayTaskError)
    assert isinstance(e.cause, MyException)
else:
    raise AssertionError("ray.get returned")

ray.shutdown()
