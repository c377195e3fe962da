"""tune.experiment.Trial: what a Python TrialScheduler, a LoggerCallback or
a callback with Ray's hook arguments sees of a trial."""

import os


class Trial:
    """A trial as the controller last showed it to the scheduler. Equal (and
    hashed) by trial_id, so dicts keyed by trials survive a restore."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    TERMINATED = "TERMINATED"
    ERROR = "ERROR"

    def __init__(self, trial_id):
        self.trial_id = trial_id
        self.status = Trial.PENDING
        self.config = {}
        self.last_result = {}  # {} until its first result, as Ray's
        self.checkpoint_iteration = 0  # training_iteration of its latest checkpoint; 0: none

    def _update(self, status, config, last_result, checkpoint_iteration):
        self.status = status
        self.config = config
        self.last_result = last_result if last_result is not None else {}
        self.checkpoint_iteration = checkpoint_iteration

    def __eq__(self, other):
        return isinstance(other, Trial) and other.trial_id == self.trial_id

    def __hash__(self):
        return hash(self.trial_id)

    def __repr__(self):
        return f"Trial({self.trial_id}, {self.status})"

    def __str__(self):
        return self.trial_id


def _record(records, trial_id, config, status, result, experiment_path):
    """records[trial_id], a Trial made on first sight (local_path: its
    directory under experiment_path), updated to status, config and result
    (None keeps the last result)."""
    trial = records.get(trial_id)
    if trial is None:
        trial = records[trial_id] = Trial(trial_id)
        trial.local_path = (os.path.join(experiment_path, "trials", trial_id)
                            if experiment_path else None)
    trial._update(status, config, result if result is not None else trial.last_result, 0)
    return trial


def _trials_of(grid):
    """Trial records of a ResultGrid's trials, as they ended (with .error)."""
    trials = []
    for result in grid:
        trial = Trial(result.trial_id)
        trial._update(result.status, result.config, result.metrics, 0)
        trial.error = result.error
        trials.append(trial)
    return trials
