# After Ray Tune's "Getting Started" search over a scikit-learn model
# (doc/source/tune/getting-started.rst, tune/doc_code/key_concepts.py's
# function trainable and search space) with the cross-validation folds of
# each trial run as Ray tasks (Ray Core's "Tasks" and "Objects" guides:
# ray.put of the data once, one task per fold, ray.get of the scores).
import numpy as np
import sklearn.datasets
from sklearn.model_selection import KFold
from sklearn.svm import SVC

import tunerun as ray
from tunerun import tune


@ray.remote
def fold_score(data, train_index, test_index, c, gamma):
    x, y = data
    model = SVC(C=c, gamma=gamma).fit(x[train_index], y[train_index])
    return model.score(x[test_index], y[test_index])


def objective(config):
    x, y = sklearn.datasets.load_digits(return_X_y=True)
    data = ray.put((x[:600], y[:600]))
    folds = KFold(n_splits=3, shuffle=True, random_state=0).split(np.arange(600))
    refs = [fold_score.remote(data, train, test, config["C"], config["gamma"])
            for train, test in folds]
    scores = ray.get(refs)
    return {"mean_accuracy": float(np.mean(scores)), "folds": len(scores)}


tuner = tune.Tuner(
    objective,
    param_space={"C": tune.loguniform(1e-1, 1e2), "gamma": tune.grid_search([1e-3, 1e-1])},
    tune_config=tune.TuneConfig(metric="mean_accuracy", mode="max", num_samples=2),
)
results = tuner.fit()
assert not results.errors, results.errors
best = results.get_best_result()
print(best.config, best.metrics["mean_accuracy"])
assert best.metrics["folds"] == 3
assert best.config["gamma"] == 1e-3 and best.metrics["mean_accuracy"] > 0.9
