"""Python searchers and schedulers (subclasses of tune.search.Searcher and
tune.schedulers.TrialScheduler) as the C++ controller calls them
(bindings/plugins_py.h): Ray's calling conventions in, plain values out.
The controller calls these with the GIL held, from its event loop."""

import base64
import os
import tempfile

from tunerun.tune.experiment import Trial
from tunerun.tune.schedulers import TrialScheduler
from tunerun.tune.search_space import Domain, SampleFrom, _SpecView


def _save(plugin):
    """The plug-in's save(checkpoint_path) file, as JSON-able text."""
    with tempfile.TemporaryDirectory(prefix="tunerun-plugin-") as d:
        path = os.path.join(d, "state")
        plugin.save(path)
        with open(path, "rb") as f:
            return base64.b64encode(f.read()).decode("ascii")


def _restore(plugin, text):
    with tempfile.TemporaryDirectory(prefix="tunerun-plugin-") as d:
        path = os.path.join(d, "state")
        with open(path, "wb") as f:
            f.write(base64.b64decode(text))
        plugin.restore(path)


def _resolve(space, suggestion, config):
    """`space` (the param_space) with `suggestion` merged over it into
    `config`; domains it leaves out are sampled, sample_from ones last."""
    later = []
    for key, value in space.items():
        if key in suggestion and isinstance(value, dict) and isinstance(suggestion[key], dict):
            config[key] = {}
            later += _resolve(value, suggestion[key], config[key])
        elif key in suggestion:
            config[key] = suggestion[key]
        elif isinstance(value, Domain):
            config[key] = value.sample()
        elif isinstance(value, SampleFrom):
            later.append((config, key, value))
        elif isinstance(value, dict):
            config[key] = {}
            later += _resolve(value, {}, config[key])
        else:
            config[key] = value
    for key, value in suggestion.items():
        config.setdefault(key, value)
    return later


class SearcherAdapter:
    def __init__(self, searcher, param_space, num_samples):
        self._searcher = searcher
        self._space = param_space
        self._budget = num_samples  # suggestions used at most; < 0: no limit
        self._suggested = 0

    def set_search_properties(self, metric, mode):
        self._searcher.set_search_properties(metric or None, mode if metric else None,
                                             self._space)

    def suggest(self, trial_id):
        if 0 <= self._budget <= self._suggested:
            return "FINISHED"
        suggestion = self._searcher.suggest(trial_id)
        if suggestion is None:
            return None
        if isinstance(suggestion, str) and suggestion == self._searcher.FINISHED:
            return "FINISHED"
        if not isinstance(suggestion, dict):
            raise TypeError(f"{type(self._searcher).__name__}.suggest({trial_id!r}) returned "
                            f"{suggestion!r}: expected a config dict, None or Searcher.FINISHED")
        config = {}
        for target, key, sample_from in _resolve(self._space, suggestion, config):
            target[key] = sample_from.func(_SpecView(config))
        self._suggested += 1
        return config

    def on_trial_result(self, trial_id, result):
        self._searcher.on_trial_result(trial_id, result)

    def on_trial_complete(self, trial_id, result, error):
        self._searcher.on_trial_complete(trial_id, result=result, error=error)

    def save(self):
        return {"suggested": self._suggested, "searcher": _save(self._searcher)}

    def restore(self, state):
        self._suggested = state["suggested"]
        _restore(self._searcher, state["searcher"])


class _ControllerView:
    """The `tune_controller` a Ray scheduler's hooks get: get_trials() only."""

    def __init__(self, trials):
        self._trials = trials

    def get_trials(self):
        return list(self._trials)


_DECISIONS = {"CONTINUE": "CONTINUE", "NOOP": "CONTINUE", "PAUSE": "PAUSE", "STOP": "STOP"}


class SchedulerAdapter:
    def __init__(self, scheduler):
        self._scheduler = scheduler
        self._trials = {}  # trial_id -> Trial, one object per trial across calls

    def _trial(self, view):
        trial_id, status, config, last_result, checkpoint_iteration = view
        trial = self._trials.get(trial_id)
        if trial is None:
            trial = self._trials[trial_id] = Trial(trial_id)
        trial._update(status, config, last_result, checkpoint_iteration)
        return trial

    def _all(self):
        return _ControllerView(self._trials.values())

    def set_search_properties(self, metric, mode):
        self._scheduler.set_search_properties(metric or None, mode if metric else None)

    def on_trial_add(self, view):
        self._scheduler.on_trial_add(self._all(), self._trial(view))

    def on_trial_result(self, view, result):
        decision = self._scheduler.on_trial_result(self._all(), self._trial(view), result)
        if decision not in _DECISIONS:
            raise ValueError(f"{type(self._scheduler).__name__}.on_trial_result returned "
                             f"{decision!r}: expected TrialScheduler.CONTINUE, PAUSE or STOP")
        return _DECISIONS[decision]

    def on_trial_complete(self, view, result):
        self._scheduler.on_trial_complete(self._all(), self._trial(view), result)

    def on_trial_error(self, view):
        self._scheduler.on_trial_error(self._all(), self._trial(view))

    def on_trial_remove(self, view):
        self._scheduler.on_trial_remove(self._all(), self._trial(view))

    def choose_trial_to_run(self, views):
        candidates = [self._trial(v) for v in views]
        chosen = self._scheduler.choose_trial_to_run(_ControllerView(candidates))
        if chosen is None:
            return -1
        if chosen not in candidates:
            raise ValueError(f"{type(self._scheduler).__name__}.choose_trial_to_run returned "
                             f"{chosen!r}, which is not one of tune_controller.get_trials() "
                             "(the PENDING and PAUSED trials)")
        return candidates.index(chosen)

    def take_exploit(self, trial_id):
        """(donor_id, new_config) or None, checked."""
        trial = self._trials.get(trial_id)
        got = None if trial is None else self._scheduler.take_exploit(self._all(), trial)
        if got is None:
            return None
        name = f"{type(self._scheduler).__name__}.take_exploit"
        if not isinstance(got, (tuple, list)) or len(got) != 2 or not isinstance(got[1], dict):
            raise TypeError(f"{name} returned {got!r}: expected None or (donor trial, new config "
                            "dict)")
        donor_id = self._trial_id(got[0], name)
        if donor_id == trial_id:
            raise ValueError(f"{name} names {trial_id} as its own donor")
        return donor_id, got[1]

    def take_trials_to_stop(self):
        name = f"{type(self._scheduler).__name__}.take_trials_to_stop"
        return [self._trial_id(t, name) for t in self._scheduler.take_trials_to_stop(self._all())]

    def overrides(self, hook):
        """Whether the scheduler's class has its own `hook` (the controller calls
        take_trials_to_stop every turn only then)."""
        return getattr(type(self._scheduler), hook) is not getattr(TrialScheduler, hook)

    def _trial_id(self, trial, name):
        trial_id = trial.trial_id if isinstance(trial, Trial) else trial
        if trial_id not in self._trials:
            raise ValueError(f"{name} returned {trial!r}, which is not a trial of this experiment")
        return trial_id

    def debug_string(self):
        return self._scheduler.debug_string()

    def save(self):
        return {"scheduler": _save(self._scheduler)}

    def restore(self, state):
        _restore(self._scheduler, state["scheduler"])
