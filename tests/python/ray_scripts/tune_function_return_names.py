# After Ray's Function API reference (doc/source/tune/api/trainable.rst,
# "Function Trainable API": a function may return its final metrics) and the
# TuneConfig reference's trial_name_creator/trial_dirname_creator
# (doc/source/tune/api/execution.rst), with the ResultGrid read by index as
# doc/source/tune/examples/tune_analyze_results.ipynb does.
import os

from tunerun import train, tune


def objective(x, a, b):
    return a * (x ** 0.5) + b


def trainable(config):
    score = objective(10, config["a"], config["b"])
    return {"score": score}


def trial_str_creator(trial):
    return "{}_{}_123".format(trial.trainable_name, trial.trial_id)


def dirname_creator(trial):
    return f"a={trial.config['a']}"


tuner = tune.Tuner(
    trainable,
    param_space={"a": tune.grid_search([1, 2, 3]), "b": 0.5},
    tune_config=tune.TuneConfig(metric="score", mode="max",
                                trial_name_creator=trial_str_creator,
                                trial_dirname_creator=dirname_creator),
    run_config=train.RunConfig(storage_path=os.path.abspath("results"), name="returned"),
)
results = tuner.fit()
assert len(results) == 3
for i in range(len(results)):
    result = results[i]
    assert abs(result.metrics["score"] - objective(10, result.config["a"], 0.5)) < 1e-9
    assert os.path.basename(result.path) == f"a={result.config['a']}", result.path
assert results.get_best_result().config["a"] == 3
assert os.path.isdir(results.experiment_path)
print(results.get_dataframe()[["config/a", "score"]])
