"""The stand-in trainable of Ray's scheduler examples (hyperband_example
imports it from ray.tune.utils.mock_trainable), written anew with the
behaviour Ray's docs describe: each step its reward follows a sigmoid-like
curve of the step, height * tanh(step / width), so `width` sets how fast it
rises and `height` where it levels off."""

import json
import math
import os

from tunerun.tune.trainable import Trainable

_FILE = "checkpoint.json"


class MyTrainableClass(Trainable):
    """Reports episode_reward_mean = height * tanh(timestep / width), where
    width and height come from the config (1 when absent); checkpoints its
    timestep, so a paused or cloned trial goes on from there."""

    def setup(self, config):
        self.timestep = 0

    def step(self):
        self.timestep += 1
        width = self.config.get("width", 1)
        height = self.config.get("height", 1)
        return {"episode_reward_mean": height * math.tanh(self.timestep / width)}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, _FILE), "w") as f:
            json.dump({"timestep": self.timestep}, f)

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, _FILE)) as f:
            self.timestep = json.load(f)["timestep"]
