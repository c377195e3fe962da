"""The default save/restore of Python searchers and schedulers: their
attributes, pickled one by one. An attribute that cannot be pickled (a
param_space holding a sample_from lambda, a lock) is left out, and keeps on
restore the value the fresh object has (set_search_properties runs before
restore)."""

import pickle


def save_attributes(obj, checkpoint_path):
    saved = {}
    for key, value in vars(obj).items():
        try:
            saved[key] = pickle.dumps(value)
        except Exception:
            continue
    with open(checkpoint_path, "wb") as f:
        pickle.dump(saved, f)


def restore_attributes(obj, checkpoint_path):
    with open(checkpoint_path, "rb") as f:
        saved = pickle.load(f)
    for key, value in saved.items():
        setattr(obj, key, pickle.loads(value))
