# After Ray's "How to Configure Tune's Output" guide
# (doc/source/tune/tutorials/tune-output.rst, "Customizing the progress
# reporter": a ProgressReporter subclass with should_report and report) and
# the reporter API (doc/source/tune/api/reporters.rst: CLIReporter options,
# JupyterNotebookReporter).
from tunerun import train, tune
from tunerun.tune import CLIReporter, JupyterNotebookReporter, ProgressReporter


class CustomReporter(ProgressReporter):
    def __init__(self):
        self.calls = 0
        self.final = None

    def should_report(self, trials, done=False):
        return True

    def report(self, trials, *sys_info):
        self.calls += 1
        print(*sys_info)
        print("\n".join([str(trial) for trial in trials]))
        if sys_info and sys_info[0] is True:
            self.final = {t.trial_id: (t.status, t.last_result.get("score")) for t in trials}


def trainable(config):
    for i in range(3):
        train.report({"score": config["x"] * i})


reporter = CustomReporter()
tuner = tune.Tuner(trainable, param_space={"x": tune.grid_search([1, 2])},
                   run_config=train.RunConfig(progress_reporter=reporter))
results = tuner.fit()
assert reporter.calls >= 2 * 3, reporter.calls
assert reporter.final is not None
assert sorted(reporter.final.values()) == [("TERMINATED", 2), ("TERMINATED", 4)], reporter.final

cli = CLIReporter(max_progress_rows=10, metric_columns={"score": "Score"},
                  parameter_columns=["x"], sort_by_metric=True, metric="score", mode="max",
                  max_report_frequency=1)
tune.Tuner(trainable, param_space={"x": tune.grid_search([1, 2])},
           run_config=train.RunConfig(progress_reporter=cli)).fit()
nb = JupyterNotebookReporter(overwrite=True, metric_columns=["score"])
tune.Tuner(trainable, param_space={"x": tune.grid_search([3])},
           run_config=train.RunConfig(progress_reporter=nb)).fit()
