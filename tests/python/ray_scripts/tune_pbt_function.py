# After Ray's PBT function example (python/ray/tune/examples/pbt_function.py)
# and the PBT guide: a checkpointing function trainable, hyperparam_mutations
# with a list and a function, perturbation_interval.
import json
import os
import random
import tempfile

from tunerun import train, tune
from tunerun.train import Checkpoint
from tunerun.tune.schedulers import PopulationBasedTraining


def pbt_function(config):
    step, accuracy = 1, 0.0
    checkpoint = train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as d:
            with open(os.path.join(d, "checkpoint.json")) as f:
                state = json.load(f)
        step, accuracy = state["step"] + 1, state["accuracy"]
    while step <= 12:
        accuracy += config["lr"] * (1 - accuracy) / 2
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "checkpoint.json"), "w") as f:
                json.dump({"step": step, "accuracy": accuracy}, f)
            train.report({"mean_accuracy": accuracy, "cur_lr": config["lr"]},
                         checkpoint=Checkpoint.from_directory(d))
        step += 1


pbt = PopulationBasedTraining(
    time_attr="training_iteration",
    perturbation_interval=4,
    hyperparam_mutations={"lr": lambda: random.uniform(0.0001, 0.02),
                          "some_other_factor": [1, 2]},
)
results = tune.Tuner(
    pbt_function,
    run_config=train.RunConfig(name="pbt_function_test", stop={"training_iteration": 12},
                               checkpoint_config=train.CheckpointConfig(num_to_keep=4)),
    tune_config=tune.TuneConfig(scheduler=pbt, metric="mean_accuracy", mode="max",
                                num_samples=4),
    param_space={"lr": 0.0001, "some_other_factor": 1},
).fit()
best = results.get_best_result()
print("best config", best.config)
assert not results.errors, results.errors
assert all(r.metrics["training_iteration"] == 12 for r in results)
