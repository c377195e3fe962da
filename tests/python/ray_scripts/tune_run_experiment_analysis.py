# After Ray 1.x/2.x's tune.run + ExperimentAnalysis scripts (the "Analysis"
# reference, doc/source/tune/api/analysis.rst, and users' repositories):
# tune.run with a stop dict, resources_per_trial, a CLIReporter with
# metric_columns, then best_config/best_trial/best_result/best_result_df,
# dataframe(), get_best_trial(), trial_dataframes, get_all_configs,
# best_logdir and ExperimentAnalysis(path).
import numpy as np

from tunerun import tune
from tunerun.tune import CLIReporter
from tunerun.tune.analysis import ExperimentAnalysis


def objective(step, alpha, beta):
    return (0.1 + alpha * step / 100) ** (-1) + beta * 0.1


def training_function(config):
    for step in range(10):
        tune.report(mean_loss=objective(step, config["alpha"], config["beta"]),
                    neg_loss=-objective(step, config["alpha"], config["beta"]))


reporter = CLIReporter(metric_columns=["mean_loss", "training_iteration"],
                       parameter_columns=["alpha", "beta"], max_report_frequency=5)
reporter.add_metric_column("neg_loss")
analysis = tune.run(
    training_function,
    name="exp",
    local_dir="./results",
    stop={"training_iteration": 5},
    resources_per_trial={"cpu": 1},
    config={"alpha": tune.grid_search([0.001, 0.01, 0.1]),
            "beta": tune.choice([1, 2, 3])},
    progress_reporter=reporter,
    verbose=1)

best_trial = analysis.get_best_trial("mean_loss", "min", "last")
print("Best trial config: {}".format(best_trial.config))
print("Best trial final loss: {}".format(best_trial.last_result["mean_loss"]))
assert best_trial.config["alpha"] == 0.1
assert best_trial.last_result["training_iteration"] == 5
assert analysis.get_best_config(metric="mean_loss", mode="min")["alpha"] == 0.1

df = analysis.dataframe(metric="mean_loss", mode="min")
print(df)
assert len(df) == 3
assert "config/alpha" in df.columns
assert len(analysis.trial_dataframes) == 3
for logdir, tdf in analysis.trial_dataframes.items():
    assert len(tdf) == 5, logdir
configs = analysis.get_all_configs()
assert sorted(c["alpha"] for c in configs.values()) == [0.001, 0.01, 0.1]
assert len(analysis.trials) == 3
assert all(t.status == "TERMINATED" for t in analysis.trials)

analysis2 = tune.run(training_function, config={"alpha": tune.uniform(0, 0.2), "beta": 1},
                     num_samples=4, metric="mean_loss", mode="min",
                     stop={"training_iteration": 5}, storage_path="./results", name="exp2",
                     verbose=0)
print(analysis2.best_config)
print(analysis2.best_trial)
print(analysis2.best_result)
print(analysis2.best_result_df)
print(analysis2.best_logdir)
best_alpha = max(t.config["alpha"] for t in analysis2.trials)
assert np.isclose(analysis2.best_config["alpha"], best_alpha)
assert analysis2.best_result["mean_loss"] == min(
    t.last_result["mean_loss"] for t in analysis2.trials)
assert len(analysis2.best_result_df) == 1
assert len(analysis2.results_df) == 4
reloaded = ExperimentAnalysis(analysis2.experiment_path, default_metric="mean_loss",
                              default_mode="min")
assert np.isclose(reloaded.best_config["alpha"], best_alpha)
