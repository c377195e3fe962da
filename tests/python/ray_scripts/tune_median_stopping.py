# After Ray's MedianStoppingRule reference (doc/source/tune/api/schedulers.rst)
# over the objective of Ray's search examples (doc/source/tune/examples/
# bohb_example.ipynb, optuna_example.ipynb): trials below the running median
# after the grace period stop early.
import time

from tunerun import train, tune
from tunerun.tune.schedulers import MedianStoppingRule


def evaluate(step, width, height, activation):
    time.sleep(0.001)
    activation_boost = 10 if activation == "relu" else 0
    return (0.1 + width * step / 100) ** (-1) + height * 0.1 + activation_boost


def objective(config):
    for step in range(config["steps"]):
        score = evaluate(step, config["width"], config["height"], config["activation"])
        train.report({"iterations": step, "mean_loss": score})


search_space = {
    "steps": 9,
    "width": tune.uniform(0, 20),
    "height": tune.uniform(-100, 100),
    "activation": tune.choice(["relu", "tanh"]),
}
msr = MedianStoppingRule(time_attr="training_iteration", metric="mean_loss", mode="min",
                         grace_period=2, min_samples_required=2)
results = tune.Tuner(objective, param_space=dict(search_space, width=tune.uniform(0, 20)),
                     tune_config=tune.TuneConfig(scheduler=msr, num_samples=6,
                                                 max_concurrent_trials=2)).fit()
assert len(results) == 6 and results.num_errors == 0
print(sorted(r.metrics["training_iteration"] for r in results))
