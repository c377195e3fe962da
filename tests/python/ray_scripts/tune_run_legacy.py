# After Ray 1.x/2.x's tune.run scripts found in users' repositories (the
# "tune.run(..., config=, num_samples=, metric=, mode=)" form Ray's old
# quick-start used) and ExperimentAnalysis.
from tunerun import tune


def training_function(config):
    alpha, beta = config["alpha"], config["beta"]
    for step in range(10):
        intermediate_score = (0.1 + alpha * step / 100) ** (-1) + beta * 0.1
        tune.report(mean_loss=intermediate_score)


analysis = tune.run(
    training_function,
    config={"alpha": tune.grid_search([0.001, 0.01, 0.1]), "beta": tune.choice([1, 2, 3])},
    metric="mean_loss", mode="min", verbose=0)
print("Best config: ", analysis.get_best_config(metric="mean_loss", mode="min"))
df = analysis.results_df
assert len(df) == 3
assert analysis.best_config["alpha"] == 0.1
