# After Ray's stopping guide, "Stop on trial failures"
# (doc/source/tune/doc_code/stopping.py): FailureConfig(fail_fast=True) ends
# the experiment at the first error, and no trial reports.
import time

from tunerun import tune


def my_failing_trainable(config):
    if config["should_fail"]:
        raise RuntimeError("Failing (on purpose)!")
    time.sleep(10)
    tune.report({"mean_accuracy": 0.9})


result_grid = tune.Tuner(
    my_failing_trainable,
    param_space={"should_fail": tune.grid_search([True, False])},
    run_config=tune.RunConfig(failure_config=tune.FailureConfig(fail_fast=True)),
).fit()
for result in result_grid:
    final_iter = result.metrics.get("training_iteration")
    assert not final_iter, final_iter
assert result_grid.errors
