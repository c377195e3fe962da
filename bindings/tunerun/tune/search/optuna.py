"""Ray's tune.search.optuna: OptunaSearch, here tunerun's own TPE (search/internal/tpe.h)
or, with several metrics, its multi-objective TPE or NSGA-II; with a
define-by-run function as its space, the Optuna library itself."""

from tunerun.tune.search._searchers import Searcher, TPESearch


class OptunaSearch(TPESearch):
    """Ray's OptunaSearch, mapped onto tunerun's TPE (search/internal/tpe.h, weighted
    as Optuna's TPESampler), not Optuna itself: `space` is a dict of tune
    domains (Optuna distributions are not supported), `seed` seeds it, and `evaluated_rewards` is not supported
    (give points_to_evaluate only). `sampler`: None (TPE; with a list of
    metrics, multi-objective TPE, search/internal/motpe.h, as Optuna's
    TPESampler then is), or an optuna.samplers.TPESampler or NSGAIISampler
    object, which picks tunerun's TPE (MOTPE) or NSGA-II by its class name
    and leaves its own settings aside.

    A function as `space` is Ray's define-by-run search: it gets an Optuna
    trial, calls its suggest_* methods (conditionally, as it likes) and
    returns None or a dict of constants; that search runs in the Optuna
    library (python3-optuna) on the driver, with `sampler` (default
    TPESampler(seed=seed)) and Ray's semantics: the config is the trial's
    params plus the constants, and each completed trial's last result is
    told to the study (an errored one as failed)."""

    def __new__(cls, space=None, *args, **kwargs):
        if callable(space):
            return _DefineByRunSearch(space, *args, **kwargs)
        return super().__new__(cls)

    def __init__(self, space=None, metric=None, mode=None, points_to_evaluate=None, sampler=None,
                 seed=None, evaluated_rewards=None):
        kind = type(sampler).__name__ if sampler is not None else "TPESampler"
        if kind not in ("TPESampler", "NSGAIISampler"):
            raise ValueError(f"OptunaSearch: sampler {kind} is not supported (tunerun runs its "
                             "own TPE or NSGA-II: pass None, TPESampler() or NSGAIISampler())")
        if evaluated_rewards is not None:
            raise ValueError("OptunaSearch: evaluated_rewards is not supported")
        several = isinstance(metric, (list, tuple)) and len(metric) > 1
        if kind == "NSGAIISampler":
            self._algorithm = "nsga2"
        elif several:
            self._algorithm = "motpe"
        options = {} if self._algorithm != "tpe" else {"weighting": "optuna"}
        super().__init__(space=space, metric=metric, mode=mode,
                         points_to_evaluate=points_to_evaluate, seed=seed, **options)

    def _spec(self, metric=None):
        """With several metrics from TuneConfig (none given here), the
        multi-objective TPE, as Ray's OptunaSearch then builds a study with
        one direction per metric."""
        spec = super()._spec(metric)
        if spec["algorithm"] == "tpe" and isinstance(metric, (list, tuple)) and len(metric) > 1:
            spec["algorithm"] = "motpe"
            spec.pop("weighting", None)  # MOTPE's own default: as Optuna's
        return spec


class _DefineByRunSearch(Searcher):
    """OptunaSearch(space=function): an Optuna study asked for each trial's
    config and told each trial's final result. Its study does not survive
    Tuner.restore (a restored search starts a new study)."""

    def __init__(self, space, metric=None, mode=None, points_to_evaluate=None, sampler=None,
                 seed=None, evaluated_rewards=None):
        super().__init__()
        try:
            import optuna  # noqa: F401
        except ImportError:
            raise ImportError("OptunaSearch(space=<function>) runs a define-by-run search in "
                              "the optuna package, which is not installed (Debian: "
                              "python3-optuna); or give space as a dict of tune domains") from None
        if evaluated_rewards is not None:
            raise ValueError("OptunaSearch: evaluated_rewards is not supported")
        self._metric, self._mode = metric, mode
        self._define = space
        self._sampler, self._seed = sampler, seed
        self._points = list(points_to_evaluate or [])
        self._study = None
        self._asked = {}

    def _objectives(self):
        metrics = self._metric if isinstance(self._metric, (list, tuple)) else [self._metric]
        modes = self._mode if isinstance(self._mode, (list, tuple)) else [self._mode] * len(metrics)
        if None in metrics or None in modes:
            raise ValueError("OptunaSearch: a define-by-run search needs metric and mode "
                             "(in OptunaSearch or TuneConfig)")
        if any(m not in ("min", "max") for m in modes) or len(modes) != len(metrics):
            raise ValueError(f"OptunaSearch: mode must be \"min\" or \"max\" per metric, "
                             f"got {self._mode!r}")
        return list(metrics), list(modes)

    def _open_study(self):
        import optuna
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        _, modes = self._objectives()
        sampler = self._sampler or optuna.samplers.TPESampler(seed=self._seed)
        self._study = optuna.create_study(
            directions=["minimize" if m == "min" else "maximize" for m in modes],
            sampler=sampler)
        for point in self._points:
            self._study.enqueue_trial(point)

    def suggest(self, trial_id):
        if self._study is None:
            self._open_study()
        trial = self._study.ask()
        constants = self._define(trial)
        if constants is not None and not isinstance(constants, dict):
            raise TypeError("OptunaSearch: the define-by-run function must return None or a "
                            f"dict of constants, got {type(constants).__name__}")
        self._asked[trial_id] = trial
        return {**trial.params, **(constants or {})}

    def on_trial_complete(self, trial_id, result=None, error=False):
        import optuna
        trial = self._asked.pop(trial_id, None)
        if trial is None:
            return
        metrics, _ = self._objectives()
        if error or not result or any(m not in result for m in metrics):
            self._study.tell(trial, state=optuna.trial.TrialState.FAIL)
            return
        values = [float(result[m]) for m in metrics]
        self._study.tell(trial, values if len(values) > 1 else values[0])
