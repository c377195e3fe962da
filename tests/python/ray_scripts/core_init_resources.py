# After Ray's starting-Ray and resources guides (doc/source/ray-core/
# starting-ray.rst, doc/source/tune/tutorials/tune-resources.rst) as tuning
# scripts use them: ray.init(num_cpus=, ignore_reinit_error=True),
# ray.is_initialized, cluster_resources/available_resources, tune.with_resources
# with a dict, and ray.shutdown.
import tunerun as ray
from tunerun import train, tune

assert not ray.is_initialized()
ray.init(num_cpus=2, ignore_reinit_error=True)
assert ray.is_initialized()
ray.init(ignore_reinit_error=True)  # a second call is ignored
resources = ray.cluster_resources()
print(resources)
assert resources["CPU"] == 2
available = ray.available_resources()
assert available.get("CPU", 0) <= resources["CPU"]


def trainable(config):
    ctx = train.get_context()
    train.report({"score": config["x"] * 2, "trial_name": ctx.get_trial_name()})


tuner = tune.Tuner(
    tune.with_resources(trainable, {"cpu": 1}),
    param_space={"x": tune.grid_search([1, 2, 3])},
)
results = tuner.fit()
assert sorted(r.metrics["score"] for r in results) == [2, 4, 6]

ray.shutdown()
assert not ray.is_initialized()
ray.init(num_cpus=2)
assert ray.is_initialized()
ray.shutdown()
