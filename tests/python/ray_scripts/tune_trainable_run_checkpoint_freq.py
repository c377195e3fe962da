# After Ray 1.x/2.x class-trainable scripts with tune.run (python/ray/tune/
# examples/hyperband_example.py's MyTrainableClass and users' repositories):
# tune.run over a Trainable class with checkpoint_freq, checkpoint_at_end,
# keep_checkpoints_num, max_failures, a HyperBand scheduler, and the best
# checkpoint of the analysis.
import json
import os

import numpy as np

from tunerun import tune
from tunerun.tune.schedulers import HyperBandScheduler


class MyTrainableClass(tune.Trainable):
    def setup(self, config):
        self.timestep = 0

    def step(self):
        self.timestep += 1
        v = np.tanh(float(self.timestep) / self.config.get("width", 1))
        v *= self.config.get("height", 1)
        return {"episode_reward_mean": v}

    def save_checkpoint(self, checkpoint_dir):
        path = os.path.join(checkpoint_dir, "checkpoint")
        with open(path, "w") as f:
            f.write(json.dumps({"timestep": self.timestep}))

    def load_checkpoint(self, checkpoint_dir):
        path = os.path.join(checkpoint_dir, "checkpoint")
        with open(path) as f:
            self.timestep = json.loads(f.read())["timestep"]


hyperband = HyperBandScheduler(max_t=20)
analysis = tune.run(
    MyTrainableClass,
    name="hyperband_test",
    num_samples=6,
    stop={"training_iteration": 20},
    config={"width": tune.randint(10, 90), "height": tune.randint(0, 100)},
    metric="episode_reward_mean",
    mode="max",
    scheduler=hyperband,
    checkpoint_freq=5,
    checkpoint_at_end=True,
    keep_checkpoints_num=2,
    max_failures=1,
    storage_path=os.path.abspath("results"),
    verbose=1,
)
print("Best hyperparameters found were: ", analysis.best_config)
best_trial = analysis.best_trial
assert analysis.best_result["episode_reward_mean"] == max(
    t.last_result["episode_reward_mean"] for t in analysis.trials)
ckpt = analysis.best_checkpoint
assert ckpt is not None
with ckpt.as_directory() as d:
    with open(os.path.join(d, "checkpoint")) as f:
        timestep = json.load(f)["timestep"]
assert timestep == best_trial.last_result["training_iteration"], (timestep, best_trial.last_result)
assert len(analysis.trials) == 6
