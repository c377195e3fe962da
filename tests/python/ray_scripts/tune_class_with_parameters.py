# After Ray's Trainable reference (doc/source/tune/api/trainable.rst: "Class
# Trainable API", tune.with_parameters over a class whose setup takes the
# extra arguments, default_resource_request, cleanup) and the FAQ's large
# data example (doc/source/tune/faq.rst).
import os

import numpy as np

from tunerun import train, tune
from tunerun.tune import PlacementGroupFactory

CLEANED = os.path.abspath("cleaned")


class MyTrainable(tune.Trainable):
    def setup(self, config, data=None, offset=0.0):
        self.data = data
        self.offset = offset
        self.total = 0.0

    def step(self):
        self.total += float(self.data.mean()) * self.config["scale"] + self.offset
        done = self.iteration + 1 >= 4
        return {"total": self.total, "done": done}

    def cleanup(self):
        with open(os.path.join(CLEANED, self.trial_id), "w") as f:
            f.write("ok")

    @classmethod
    def default_resource_request(cls, config):
        return PlacementGroupFactory([{"CPU": 1}])


os.makedirs(CLEANED, exist_ok=True)
data = np.full(1_000_000, 2.0)
results = tune.Tuner(
    tune.with_parameters(MyTrainable, data=data, offset=1.0),
    param_space={"scale": tune.grid_search([1.0, 3.0])},
    tune_config=tune.TuneConfig(metric="total", mode="max"),
).fit()
assert results.num_errors == 0, [r.error for r in results]
for r in results:
    assert r.metrics["training_iteration"] == 4, r.metrics
    assert abs(r.metrics["total"] - 4 * (2.0 * r.config["scale"] + 1.0)) < 1e-9
assert results.get_best_result().config["scale"] == 3.0
assert len(os.listdir(CLEANED)) == 2, os.listdir(CLEANED)
