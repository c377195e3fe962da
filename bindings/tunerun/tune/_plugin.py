"""What Python searchers and schedulers share: the metric and mode (given,
or the TuneConfig's), and the default save/restore: their attributes,
pickled one by one. An attribute that cannot be pickled (a param_space
holding a sample_from lambda, a lock) is left out, and keeps on restore the
value the fresh object has (set_search_properties runs before restore)."""

import pickle


class Plugin:
    def __init__(self, metric=None, mode=None):
        self._metric = metric
        self._mode = mode

    @property
    def metric(self):
        return self._metric

    @property
    def mode(self):
        return self._mode

    def _adopt(self, metric, mode):
        """set_search_properties' default: the TuneConfig's metric and mode
        where the object was given none."""
        if self._metric is None:
            self._metric = metric
        if self._mode is None:
            self._mode = mode
        return True

    def save(self, checkpoint_path):
        saved = {}
        for key, value in vars(self).items():
            try:
                saved[key] = pickle.dumps(value)
            except Exception:
                continue
        with open(checkpoint_path, "wb") as f:
            pickle.dump(saved, f)

    def restore(self, checkpoint_path):
        with open(checkpoint_path, "rb") as f:
            saved = pickle.load(f)
        for key, value in saved.items():
            setattr(self, key, pickle.loads(value))
