# After Ray's tune_basic_example (python/ray/tune/examples/tune_basic_example.py,
# shown in doc/source/tune/examples/includes/tune_basic_example.rst): argparse
# with --smoke-test, an objective with a grid over the activation, a
# RunConfig stop on training_iteration, and the best result printed.
import argparse
import time

import tunerun as ray
from tunerun import train, tune


def evaluation_fn(step, width, height):
    time.sleep(0.001)
    return (0.1 + width * step / 100) ** (-1) + height * 0.1


def easy_objective(config):
    width, height = config["width"], config["height"]
    for step in range(config["steps"]):
        intermediate_score = evaluation_fn(step, width, height)
        train.report({"iterations": step, "mean_loss": intermediate_score})


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke-test", action="store_true", help="Finish quickly for testing")
    args, _ = parser.parse_known_args(["--smoke-test"])
    ray.init(configure_logging=False)

    tuner = tune.Tuner(
        easy_objective,
        tune_config=tune.TuneConfig(metric="mean_loss", mode="min", num_samples=5),
        run_config=train.RunConfig(
            name="my_exp",
            stop={"training_iteration": 5 if args.smoke_test else 100},
        ),
        param_space={
            "steps": 100,
            "width": tune.uniform(0, 20),
            "height": tune.uniform(-100, 100),
            "activation": tune.grid_search(["relu", "tanh"]),
        },
    )
    results = tuner.fit()
    print("Best hyperparameters found were: ", results.get_best_result().config)
    assert len(results) == 10
    for r in results:
        assert r.metrics["training_iteration"] == 5
        assert r.metrics["iterations"] == 4
    df = results.get_dataframe()
    assert sorted(df["config/activation"].value_counts().to_dict().items()) == [("relu", 5),
                                                                              ("tanh", 5)]
