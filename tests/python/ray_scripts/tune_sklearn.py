# After users' scikit-learn tuning scripts (the pattern of Ray's
# doc/source/tune/examples "tune-sklearn" replacement): cross-validated
# accuracy of an SVC and a random forest, a conditional search space.
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC

from tunerun import train, tune


def objective(config):
    x, y = load_iris(return_X_y=True)
    if config["model"] == "svc":
        model = SVC(C=config["C"], gamma="scale")
    else:
        model = RandomForestClassifier(n_estimators=config["n_estimators"], random_state=0,
                                       n_jobs=1)
    train.report({"accuracy": cross_val_score(model, x, y, cv=3).mean()})


tuner = tune.Tuner(
    objective,
    param_space={"model": tune.grid_search(["svc", "forest"]),
                 "C": tune.loguniform(0.1, 10.0),
                 "n_estimators": tune.randint(5, 30)},
    tune_config=tune.TuneConfig(metric="accuracy", mode="max", num_samples=2),
)
results = tuner.fit()
best = results.get_best_result()
print(best.config, best.metrics["accuracy"])
assert len(results) == 4
assert best.metrics["accuracy"] > 0.8
df = results.get_dataframe()
assert set(df["config/model"]) == {"svc", "forest"}
