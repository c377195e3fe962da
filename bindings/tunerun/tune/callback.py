"""tune.Callback and tune.Stopper in Python, called by the C++ controller
with the GIL held, on its event loop: a slow hook delays every trial. An
exception in one ends fit() with it (the experiment stays restorable).

Unlike Ray, hooks get plain values, not Trial objects (tune.logger's
LoggerCallback gives Trial records):
    setup(stop=, num_samples=, total_num_samples=, experiment_path=)  once
    on_trial_start(trial_id, config)
    on_trial_result(trial_id, config, result)
    on_trial_complete(trial_id, config, last_result)   (None: it reported nothing)
    on_trial_error(trial_id, config, error)            (the error message)
"""


class Callback:
    def setup(self, stop=None, num_samples=None, total_num_samples=None, **info):
        """Called once before the run, as Ray's; info holds experiment_path."""

    def on_trial_start(self, trial_id, config):
        pass

    def on_trial_result(self, trial_id, config, result):
        pass

    def on_trial_complete(self, trial_id, config, last_result):
        pass

    def on_trial_error(self, trial_id, config, error):
        pass


class Stopper:
    """RunConfig(stop=...) also takes a function (trial_id, result) -> bool."""

    def __call__(self, trial_id, result) -> bool:
        return False

    def stop_all(self) -> bool:
        return False
