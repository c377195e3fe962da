# After Ray's class API reference (doc/source/tune/api/trainable.rst,
# "Advanced: Reusing Actors in Tune") and python/ray/tune/examples/
# pbt_example.py's PBTBenchmarkExample: a Trainable with setup/step/
# save_checkpoint/load_checkpoint/reset_config under reuse_actors=True, the
# Trainable's attributes (iteration, trial_id, trial_name, logdir), a
# sample_from reading another key, and a stop dict on training_iteration.
import os

import numpy as np

from tunerun import train, tune

RESETS = os.path.abspath("resets.log")


class MyTrainableClass(tune.Trainable):
    def setup(self, config):
        self.timestep = 0
        self.lr = config["lr"]
        self.width = config["width"]
        self.seen = []

    def step(self):
        self.timestep += 1
        v = np.tanh(float(self.timestep) / self.width) * self.lr
        self.seen.append(self.trial_name)
        return {"episode_reward_mean": v, "trial": self.trial_id, "it": self.iteration}

    def save_checkpoint(self, checkpoint_dir):
        path = os.path.join(checkpoint_dir, "checkpoint")
        with open(path, "w") as f:
            f.write(str(self.timestep))
        return checkpoint_dir

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "checkpoint")) as f:
            self.timestep = int(f.read())

    def reset_config(self, new_config):
        self.lr = new_config["lr"]
        self.width = new_config["width"]
        self.timestep = 0
        with open(RESETS, "a") as f:
            f.write("reset\n")
        self.config = new_config
        return True


tuner = tune.Tuner(
    MyTrainableClass,
    param_space={
        "lr": tune.grid_search([0.1, 0.2, 0.3, 0.4]),
        "width": tune.sample_from(lambda spec: 10 * spec.config.lr),
    },
    tune_config=tune.TuneConfig(metric="episode_reward_mean", mode="max",
                                reuse_actors=True, max_concurrent_trials=1),
    run_config=train.RunConfig(stop={"training_iteration": 5}, storage_path=os.path.abspath("r"),
                               checkpoint_config=train.CheckpointConfig(checkpoint_at_end=True)),
)
results = tuner.fit()
assert results.num_errors == 0, [r.error for r in results]
for r in results:
    assert r.metrics["training_iteration"] == 5, r.metrics
    assert r.metrics["it"] == 4, r.metrics
    assert r.metrics["trial"] == r.metrics["trial_id"]
    assert abs(r.config["width"] - 10 * r.config["lr"]) < 1e-9
    assert r.checkpoint is not None
    with r.checkpoint.as_directory() as d:
        with open(os.path.join(d, "checkpoint")) as f:
            assert f.read() == "5"
best = results.get_best_result()
print(best.config, best.metrics["episode_reward_mean"])
assert best.config["lr"] == 0.4
if os.path.exists(RESETS):
    print("actors reused:", len(open(RESETS).read().split()))
