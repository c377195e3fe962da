"""tune.experiment.Trial: what a Python TrialScheduler sees of a trial."""


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
