"""Ray Tune's function API from before Tuner: tune.run, ExperimentAnalysis,
TuneError, Experiment and run_experiments, over Tuner and ResultGrid.

tune.run takes Ray's keywords that have a Tuner counterpart; any other
keyword given a non-default value is a ValueError naming it (no silent
drops). ExperimentAnalysis reads a finished experiment's directory.
"""

from tunerun.train.config import CheckpointConfig, FailureConfig, RunConfig
from tunerun.tune.error import TuneError
from tunerun.tune.experiment import _trials_of
from tunerun.tune.registry import resolve_trainable
from tunerun.tune.result_grid import ResultGrid
from tunerun.tune.tuner import TuneConfig, Tuner, with_resources


class ExperimentAnalysis:
    """Ray's ExperimentAnalysis over an experiment directory
    (<storage_path>/<name>): results, dataframes and the best trial by
    default_metric/default_mode (or the run's metric and mode)."""

    def __init__(self, experiment_checkpoint_path, default_metric=None, default_mode=None):
        self._grid = ResultGrid.from_experiment(experiment_checkpoint_path)
        self.default_metric = default_metric
        self.default_mode = default_mode

    @property
    def experiment_path(self):
        return self._grid.experiment_path

    @property
    def trials(self):
        """The trials (tune.experiment.Trial: trial_id, status, config, last_result)."""
        return _trials_of(self._grid)

    @property
    def results(self):
        """{trial_id: its last result}."""
        return {r.trial_id: r.metrics for r in self._grid}

    @property
    def results_df(self):
        return self._grid.get_dataframe().set_index("trial_id", drop=False)

    @property
    def trial_dataframes(self):
        """{trial directory: its results, one row per report}, as Ray's."""
        return self.fetch_trial_dataframes()

    def fetch_trial_dataframes(self):
        return {r.path: r.metrics_dataframe for r in self._grid}

    def get_all_configs(self, prefix=False):
        """{trial directory: its config}; prefix=True flattens it with "config/" keys."""
        if not prefix:
            return {r.path: r.config for r in self._grid}
        df = self._grid.get_dataframe()
        columns = [c for c in df.columns if c.startswith("config/")]
        return {path: row.to_dict() for path, (_, row) in
                zip((r.path for r in self._grid), df[columns].iterrows())}

    def dataframe(self, metric=None, mode=None):
        """One row per trial: its last result, or with metric and mode its best one."""
        return self._grid.get_dataframe(filter_metric=metric, filter_mode=mode)

    def _best(self, metric, mode, scope="last"):
        return self._grid.get_best_result(metric or self.default_metric,
                                          mode or self.default_mode, scope)

    def get_best_config(self, metric=None, mode=None, scope="last"):
        return self._best(metric, mode, scope).config

    def get_best_logdir(self, metric=None, mode=None, scope="last"):
        return self._best(metric, mode, scope).path

    def get_best_trial(self, metric=None, mode=None, scope="last"):
        best = self._best(metric, mode, scope)
        return next(t for t in self.trials if t.trial_id == best.trial_id)

    def get_best_checkpoint(self, trial, metric=None, mode=None):
        """The best checkpoint of `trial` (a Trial or trial_id) by metric/mode."""
        trial_id = getattr(trial, "trial_id", trial)
        result = next(r for r in self._grid if r.trial_id == trial_id)
        return result.get_best_checkpoint(metric or self.default_metric,
                                          mode or self.default_mode)

    @property
    def best_config(self):
        return self.get_best_config()

    @property
    def best_result(self):
        return self._best(None, None).metrics

    @property
    def best_result_df(self):
        """The best trial's last result as a one-row dataframe indexed by trial_id."""
        best = self._best(None, None)
        df = self.results_df
        return df[df["trial_id"] == best.trial_id]

    @property
    def best_logdir(self):
        return self.get_best_logdir()

    @property
    def best_trial(self):
        return self.get_best_trial()

    @property
    def best_checkpoint(self):
        return self._best(None, None).checkpoint


# tune.run's keywords that have no counterpart here, with the value that
# means "not used" (Ray's default).
_UNSUPPORTED = {"sync_config": None, "export_formats": None, "restore": None,
                "storage_filesystem": None}


def run(run_or_experiment, name=None, metric=None, mode=None, stop=None, time_budget_s=None,
        config=None, resources_per_trial=None, num_samples=1, storage_path=None,
        search_alg=None, scheduler=None, checkpoint_config=None, verbose=None,
        max_failures=0, fail_fast=False, reuse_actors=None, raise_on_failed_trial=True,
        callbacks=None, progress_reporter=None, max_concurrent_trials=None,
        keep_checkpoints_num=None,
        checkpoint_score_attr=None, checkpoint_freq=0, checkpoint_at_end=False,
        local_dir=None, trial_name_creator=None, trial_dirname_creator=None, resume=False,
        log_to_file=False, **unsupported):
    """Ray's tune.run: runs `run_or_experiment` (a function or tune.Trainable
    class) over `config` as tune.Tuner would and returns an
    ExperimentAnalysis. checkpoint_score_attr "min-<metric>" orders by min,
    as Ray's. resume ("AUTO", True, "LOCAL", "ERRORED_ONLY",
    "AUTO+RESTART_ERRORED"...) continues the experiment `name` with
    Tuner.restore (with AUTO, a new one starts when there is none); a
    trial's output always goes to its directory (rank_<n>.log), so
    log_to_file is accepted. Differences: the keywords of _UNSUPPORTED raise
    ValueError when set; storage_path (or local_dir) defaults to "runs"."""
    for key, value in unsupported.items():
        if key not in _UNSUPPORTED:
            raise TypeError(f"tune.run() got an unexpected keyword argument {key!r}")
        if value != _UNSUPPORTED[key]:
            raise ValueError(f"tune.run: {key} is not supported by tunerun")
    trainable = resolve_trainable(run_or_experiment)
    if resources_per_trial:
        trainable = with_resources(trainable, resources_per_trial)
    if checkpoint_config is None:
        order = "max"
        if checkpoint_score_attr and checkpoint_score_attr.startswith("min-"):
            checkpoint_score_attr, order = checkpoint_score_attr[4:], "min"
        checkpoint_config = CheckpointConfig(
            num_to_keep=keep_checkpoints_num, checkpoint_score_attribute=checkpoint_score_attr,
            checkpoint_score_order=order, checkpoint_frequency=checkpoint_freq,
            checkpoint_at_end=checkpoint_at_end)
    tune_config = TuneConfig(metric=metric, mode=mode, search_alg=search_alg,
                             scheduler=scheduler, num_samples=num_samples,
                             max_concurrent_trials=max_concurrent_trials,
                             time_budget_s=time_budget_s, reuse_actors=bool(reuse_actors),
                             trial_name_creator=trial_name_creator,
                             trial_dirname_creator=trial_dirname_creator)
    run_config = RunConfig(
        name=name, storage_path=storage_path or local_dir or "runs", stop=stop,
        callbacks=callbacks, progress_reporter=progress_reporter,
        checkpoint_config=checkpoint_config,
        failure_config=FailureConfig(max_failures=max_failures, fail_fast=fail_fast),
        verbose=1 if verbose is None else min(int(verbose), 2))
    tuner = _resumed(resume, trainable, run_config)
    if tuner is None:
        tuner = Tuner(trainable, param_space=config or {}, tune_config=tune_config,
                      run_config=run_config)
    grid = tuner.fit()
    if raise_on_failed_trial and grid.num_errors:
        failed = [r.trial_id for r in grid if r.error is not None]
        raise TuneError(f"Trials did not complete: {failed}")
    return ExperimentAnalysis(grid.experiment_path, default_metric=metric, default_mode=mode)


def _resumed(resume, trainable, run_config):
    """tune.run(resume=...): the Tuner that continues the experiment, or None
    for a new one."""
    if not resume:
        return None
    import os
    mode = "LOCAL" if resume is True else str(resume).upper()
    if not run_config.name:
        raise ValueError(f"tune.run: resume={resume!r} needs the experiment's name= (the "
                         "experiment to continue)")
    path = os.path.join(os.path.expanduser(str(run_config.storage_path)), run_config.name)
    if not Tuner.can_restore(path):
        if mode.startswith("AUTO"):
            return None
        raise ValueError(f"tune.run: resume={resume!r}, but {path} holds no experiment to "
                         "continue (resume=\"AUTO\" starts one when there is none)")
    restart = "RESTART_ERRORED" in mode
    return Tuner.restore(path, trainable, resume_errored="ERRORED" in mode and not restart,
                         restart_errored=restart,
                         run_config=RunConfig(
                             callbacks=run_config.callbacks,
                             progress_reporter=run_config.progress_reporter,
                             stop=run_config.stop, verbose=run_config.verbose,
                             checkpoint_config=run_config.checkpoint_config,
                             failure_config=run_config.failure_config))


# An Experiment's keywords (Ray's Experiment.__init__ and the keys of its
# from_json spec) that tune.run takes under the same name.
_EXPERIMENT_KEYS = ("stop", "time_budget_s", "config", "resources_per_trial", "num_samples",
                    "storage_path", "local_dir", "checkpoint_config", "trial_name_creator",
                    "trial_dirname_creator", "max_failures", "keep_checkpoints_num",
                    "checkpoint_score_attr", "checkpoint_freq", "checkpoint_at_end",
                    "log_to_file", "sync_config", "export_formats", "restore")


class Experiment:
    """Ray's tune.Experiment: a name, what to run and tune.run's keywords for
    it (stop, config, num_samples, resources_per_trial, storage_path,
    checkpoint_config, max_failures...), run by tune.run_experiments. `run`
    is a function or tune.Trainable class, or the name it was registered
    under (tune.register_trainable)."""

    def __init__(self, name, run, **spec):
        run = resolve_trainable(run)
        for key in spec:
            if key not in _EXPERIMENT_KEYS:
                raise TypeError(f"Experiment {name!r}: unexpected keyword argument {key!r} "
                                f"(known: {', '.join(_EXPERIMENT_KEYS)})")
        self.name = name
        self.run = run
        self.spec = dict(spec)

    @classmethod
    def from_json(cls, name, spec):
        """Ray's form: {"run": trainable, "config": {...}, "stop": {...}, ...}."""
        if not isinstance(spec, dict):
            raise TypeError(f"Experiment {name!r}: the spec must be a dict, got "
                            f"{type(spec).__name__}")
        if "run" not in spec:
            raise ValueError(f"Experiment {name!r}: the spec has no 'run' key (the trainable)")
        rest = {k: v for k, v in spec.items() if k != "run"}
        return cls(name, spec["run"], **rest)

    def __repr__(self):
        return f"Experiment(name={self.name!r}, run={getattr(self.run, '__name__', self.run)!r})"


def _as_experiments(experiments):
    if isinstance(experiments, Experiment):
        return [experiments]
    if isinstance(experiments, dict):
        return [Experiment.from_json(name, spec) for name, spec in experiments.items()]
    if isinstance(experiments, (list, tuple)):
        for e in experiments:
            if not isinstance(e, Experiment):
                raise TypeError(f"run_experiments: expected Experiment objects, got "
                                f"{type(e).__name__}")
        return list(experiments)
    raise TypeError("run_experiments takes an Experiment, a list of them or a dict "
                    f"{{name: spec}}, got {type(experiments).__name__}")


def run_experiments(experiments, scheduler=None, verbose=2, progress_reporter=None,
                    resume=False, reuse_actors=None, raise_on_failed_trial=True,
                    concurrent=True, callbacks=None):
    """Ray's tune.run_experiments: runs each Experiment (or {name: spec} of
    Ray's from_json form) and returns the list of all their trials
    (tune.experiment.Trial). Differences: the experiments run one after the
    other, each an experiment of its own under its storage_path (Ray, with
    concurrent=True, interleaves their trials in one run); a scheduler
    object is used by one experiment only, so with several experiments pass
    a scheduler that holds no state or None; resume is refused (use
    Tuner.restore)."""
    if resume:
        raise ValueError("run_experiments: resume is not supported by tunerun; continue an "
                         "experiment with tune.Tuner.restore(path, trainable)")
    experiments = _as_experiments(experiments)
    if scheduler is not None and len(experiments) > 1:
        raise ValueError("run_experiments: one scheduler object cannot serve several "
                         "experiments here (they run one after the other); run them apart")
    trials = []
    for experiment in experiments:
        analysis = run(experiment.run, name=experiment.name, scheduler=scheduler,
                       verbose=verbose, progress_reporter=progress_reporter,
                       reuse_actors=reuse_actors, raise_on_failed_trial=raise_on_failed_trial,
                       callbacks=callbacks, **experiment.spec)
        trials.extend(analysis.trials)
    return trials
