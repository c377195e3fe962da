# After Ray's PBT guide (doc/source/tune/examples/pbt_guide.ipynb, and
# python/ray/tune/examples/pbt_example.py's custom_explore_fn) and PB2
# (python/ray/tune/examples/pb2_example.py): a checkpointing function
# trainable under PopulationBasedTraining with hyperparam_mutations and a
# custom_explore_fn clipping the values, then the same under PB2's
# hyperparam_bounds.
import json
import os
import random
import tempfile

from tunerun import train, tune
from tunerun.train import Checkpoint
from tunerun.tune.schedulers import PopulationBasedTraining
from tunerun.tune.schedulers.pb2 import PB2


def pbt_function(config):
    step = 0
    accuracy = 0.0
    checkpoint = train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as d:
            with open(os.path.join(d, "state.json")) as f:
                state = json.load(f)
            step, accuracy = state["step"], state["accuracy"]
    while step < 12:
        lr = config["lr"]
        optimal = 0.01 * (1 + step)
        # the example's noise (pbt_function.py adds it too)
        accuracy += (lr if lr < optimal else -lr * 0.1) + random.random() * 1e-4
        accuracy = max(0.0, min(accuracy, 100.0))
        step += 1
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "state.json"), "w") as f:
                json.dump({"step": step, "accuracy": accuracy}, f)
            train.report({"mean_accuracy": accuracy, "cur_lr": lr},
                         checkpoint=Checkpoint.from_directory(tmp))


def explore(config):
    # ensure we collect enough timesteps to do sgd, as in pbt_example.py
    config["lr"] = min(max(config["lr"], 0.0001), 0.5)
    config["some_other_factor"] = 1
    return config


pbt = PopulationBasedTraining(
    time_attr="training_iteration",
    perturbation_interval=3,
    hyperparam_mutations={
        "lr": lambda: random.uniform(0.0001, 0.02),
        "some_other_factor": [1, 2],
    },
    custom_explore_fn=explore,
)
tuner = tune.Tuner(
    pbt_function,
    run_config=train.RunConfig(name="pbt_test", storage_path=os.path.abspath("r"),
                               stop={"training_iteration": 12},
                               checkpoint_config=train.CheckpointConfig(num_to_keep=3)),
    tune_config=tune.TuneConfig(scheduler=pbt, metric="mean_accuracy", mode="max",
                                num_samples=4),
    param_space={"lr": 0.001, "some_other_factor": 1},
)
results = tuner.fit()
assert results.num_errors == 0, [r.error for r in results]
best = results.get_best_result()
print("Best hyperparameters found were: ", best.config)
for r in results:
    assert 0.0001 <= r.config["lr"] <= 0.5
    assert r.metrics["training_iteration"] == 12
# whether a trial is exploited depends on which trials reached the interval
# first (as in Ray): what must hold is that explored configs stay clipped.

pb2 = PB2(
    time_attr="training_iteration",
    perturbation_interval=3,
    hyperparam_bounds={"lr": [0.0001, 0.02]},
)
results = tune.Tuner(
    pbt_function,
    run_config=train.RunConfig(name="pb2_test", storage_path=os.path.abspath("r"),
                               stop={"training_iteration": 12}),
    tune_config=tune.TuneConfig(scheduler=pb2, metric="mean_accuracy", mode="max",
                                num_samples=4),
    param_space={"lr": tune.uniform(0.0001, 0.02)},
).fit()
assert results.num_errors == 0, [r.error for r in results]
print("PB2 best:", results.get_best_result().config)
for r in results:
    assert 0.0001 <= r.config["lr"] <= 0.02
