# After Ray's BayesOpt example (doc/source/tune/examples/bayesopt_example.ipynb:
# BayesOptSearch(utility_kwargs=...) under a ConcurrencyLimiter with
# AsyncHyperBandScheduler) and the PBT guide's synchronous mode
# (doc/source/tune/api/schedulers.rst, PopulationBasedTraining(synch=True))
# over a class trainable with checkpoints.
import os
import random
import time

from tunerun import train, tune
from tunerun.tune.schedulers import AsyncHyperBandScheduler, PopulationBasedTraining
from tunerun.tune.search import ConcurrencyLimiter
from tunerun.tune.search.bayesopt import BayesOptSearch


def evaluate(step, width, height):
    time.sleep(0.001)
    return (0.1 + width * step / 100) ** (-1) + height * 0.1


def objective(config):
    for step in range(config["steps"]):
        score = evaluate(step, config["width"], config["height"])
        train.report({"iterations": step, "mean_loss": score})


algo = BayesOptSearch(utility_kwargs={"kind": "ucb", "kappa": 2.5, "xi": 0.0})
algo = ConcurrencyLimiter(algo, max_concurrent=2)
scheduler = AsyncHyperBandScheduler()
tuner = tune.Tuner(
    objective,
    tune_config=tune.TuneConfig(metric="mean_loss", mode="min", search_alg=algo,
                                scheduler=scheduler, num_samples=8),
    param_space={"steps": 10, "width": tune.uniform(0, 20), "height": tune.uniform(-100, 100)},
)
results = tuner.fit()
print("Best hyperparameters found were: ", results.get_best_result().config)
assert len(results) == 8 and results.num_errors == 0


class PBTBenchmarkExample(tune.Trainable):
    """pbt_example.py's toy: accuracy grows fastest near an optimal lr."""

    def setup(self, config):
        self.lr = config["lr"]
        self.accuracy = 0.0

    def step(self):
        midpoint = 100
        q_tolerance = 3
        noise_level = 2
        if self.accuracy > midpoint:
            optimal_lr = 0.01 * (2 * midpoint - self.accuracy) / midpoint
        else:
            optimal_lr = 0.01 * self.accuracy / midpoint
        optimal_lr = min(0.01, max(0.001, optimal_lr))
        q_err = max(self.lr, optimal_lr) / min(self.lr, optimal_lr)
        if q_err < q_tolerance:
            self.accuracy += (1.0 / q_err) * random.random()
        elif self.lr > optimal_lr:
            self.accuracy -= (q_err - q_tolerance) * random.random()
        self.accuracy += noise_level * random.normalvariate(0, 1)
        self.accuracy = max(0, self.accuracy)
        return {"mean_accuracy": self.accuracy, "cur_lr": self.lr}

    def save_checkpoint(self, checkpoint_dir):
        return {"accuracy": self.accuracy, "lr": self.lr}

    def load_checkpoint(self, checkpoint):
        self.accuracy = checkpoint["accuracy"]

    def reset_config(self, new_config):
        self.lr = new_config["lr"]
        self.config = new_config
        return True


pbt = PopulationBasedTraining(
    time_attr="training_iteration",
    perturbation_interval=4,
    hyperparam_mutations={"lr": lambda: random.uniform(0.0001, 0.02)},
    synch=True,
)
results = tune.Tuner(
    PBTBenchmarkExample,
    run_config=train.RunConfig(name="pbt_class_test", stop={"training_iteration": 16},
                               storage_path=os.path.abspath("r")),
    tune_config=tune.TuneConfig(scheduler=pbt, metric="mean_accuracy", mode="max",
                                reuse_actors=True, num_samples=4),
    param_space={"lr": 0.0001},
).fit()
assert results.num_errors == 0, [r.error for r in results]
for r in results:
    assert r.metrics["training_iteration"] == 16
print("PBT best:", results.get_best_result().config)
