# After Ray's class API guide (doc/source/tune/api/trainable.rst, and
# doc/source/tune/doc_code/trainable.py): setup/step/save_checkpoint/
# load_checkpoint, checkpoint_frequency and checkpoint_at_end.
import os

from tunerun import train, tune


class MyTrainableClass(tune.Trainable):
    def setup(self, config):
        self.state = {"value": config["start"]}

    def step(self):
        self.state["value"] += 1
        return {"value": self.state["value"]}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "value.txt"), "w") as f:
            f.write(str(self.state["value"]))

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "value.txt")) as f:
            self.state["value"] = int(f.read())


results = tune.Tuner(
    MyTrainableClass,
    param_space={"start": tune.grid_search([0, 10])},
    run_config=train.RunConfig(
        stop={"training_iteration": 4},
        checkpoint_config=train.CheckpointConfig(checkpoint_frequency=2,
                                                 checkpoint_at_end=True)),
).fit()
for result in results:
    assert result.metrics["value"] == result.config["start"] + 4
    with result.checkpoint.as_directory() as d:
        assert int(open(os.path.join(d, "value.txt")).read()) == result.config["start"] + 4
