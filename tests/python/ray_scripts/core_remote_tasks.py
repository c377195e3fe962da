# After Ray Core's "Tasks", "Objects" and "Actors" walkthroughs
# (doc/source/ray-core/tasks.rst, objects.rst, actors.rst) as tuning scripts use
# them for small helper work: remote functions, put/get, wait, an actor.
import tunerun as ray

ray.init(ignore_reinit_error=True)


@ray.remote
def square(x):
    return x * x


futures = [square.remote(i) for i in range(4)]
assert ray.get(futures) == [0, 1, 4, 9]

ref = ray.put([1, 2, 3])
assert ray.get(ref) == [1, 2, 3]


@ray.remote(num_cpus=1)
def total(values):
    return sum(values)


assert ray.get(total.remote(ref)) == 6

ready, not_ready = ray.wait([square.remote(5), square.remote(6)], num_returns=1)
assert len(ready) == 1 and len(not_ready) == 1
assert ray.get(ready[0]) in (25, 36)


@ray.remote
def fails():
    raise ValueError("on purpose")


try:
    ray.get(fails.remote())
except ValueError as error:
    assert "on purpose" in str(error)
else:
    raise AssertionError("ray.get did not raise the task's error")


@ray.remote
class Counter:
    def __init__(self):
        self.value = 0

    def increment(self):
        self.value += 1
        return self.value


counter = Counter.remote()
refs = [counter.increment.remote() for _ in range(3)]
assert ray.get(refs) == [1, 2, 3]
ray.shutdown()
