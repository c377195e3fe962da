# Users' scripts that pickle closures with ray.cloudpickle (as Ray's own
# serialization does) to hand them to a trainable.
import tunerun as ray
from tunerun import train, tune

offset = 3
payload = ray.cloudpickle.dumps(lambda x: x + offset)


def trainable(config):
    fn = ray.cloudpickle.loads(config["payload"])
    train.report({"value": fn(config["x"])})


result = tune.Tuner(trainable, param_space={"payload": payload, "x": 4}).fit()[0]
assert result.metrics["value"] == 7
