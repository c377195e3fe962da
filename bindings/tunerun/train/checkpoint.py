"""train.Checkpoint, as Ray's: a directory of files, with a metadata dict.
Every rank imports this module; pickle, tempfile, shutil and json are
imported by the calls that use them."""

import os

_METADATA = ".metadata.json"  # Ray's name
_DICT_FILE = "dict_checkpoint.pkl"  # where Ray 2.0-2.6 kept a dict checkpoint


class Checkpoint:
    def __init__(self, path):
        self.path = os.fspath(path)

    @classmethod
    def from_directory(cls, path) -> "Checkpoint":
        path = os.fspath(path)
        if not os.path.isdir(path):
            raise ValueError(f"Checkpoint.from_directory: {path} is not a directory")
        return cls(path)

    @classmethod
    def from_dict(cls, data: dict) -> "Checkpoint":
        """Ray 2.0-2.6's dict checkpoint: `data` pickled into a new directory
        (dict_checkpoint.pkl, Ray's file name), which report() publishes as any
        other checkpoint; to_dict() reads it back."""
        import pickle
        import tempfile
        if not isinstance(data, dict):
            raise TypeError(f"Checkpoint.from_dict takes a dict, got {type(data).__name__}")
        path = tempfile.mkdtemp(prefix="checkpoint_")
        with open(os.path.join(path, _DICT_FILE), "wb") as f:
            pickle.dump(data, f)
        checkpoint = cls(path)
        checkpoint._dict = data
        checkpoint._temporary = True  # report() removes the directory once copied
        return checkpoint

    def to_dict(self) -> dict:
        """The dict a Checkpoint.from_dict checkpoint holds."""
        import pickle
        if getattr(self, "_dict", None) is not None:
            return self._dict
        try:
            with open(os.path.join(self.path, _DICT_FILE), "rb") as f:
                return pickle.load(f)
        except FileNotFoundError:
            raise ValueError(f"Checkpoint.to_dict: {self.path} was not made by "
                             "Checkpoint.from_dict; read its files with as_directory()") from None

    def as_directory(self):
        """`with ckpt.as_directory() as d:` the checkpoint's directory, read-only
        (it is the published one, not a copy)."""
        return _Directory(self.path)

    def to_directory(self, path=None) -> str:
        import shutil
        import tempfile
        path = os.fspath(path) if path is not None else tempfile.mkdtemp(prefix="checkpoint_")
        shutil.copytree(self.path, path, dirs_exist_ok=True)
        return path

    def get_metadata(self) -> dict:
        """The checkpoint's metadata dict, as Ray's ({} when none was set); kept
        in the directory's .metadata.json, so it travels with report()."""
        import json
        try:
            with open(os.path.join(self.path, _METADATA)) as f:
                return json.load(f)
        except FileNotFoundError:
            return {}

    def set_metadata(self, metadata: dict):
        """Replaces the metadata (JSON values)."""
        import json
        with open(os.path.join(self.path, _METADATA), "w") as f:
            json.dump(dict(metadata), f)

    def update_metadata(self, metadata: dict):
        """Merges `metadata` over the metadata."""
        self.set_metadata({**self.get_metadata(), **metadata})

    def __repr__(self):
        return f"Checkpoint(path={self.path!r})"

    def __eq__(self, other):
        return isinstance(other, Checkpoint) and other.path == self.path


class _Directory:
    # Not contextlib.contextmanager: contextlib imports collections, a tenth
    # of a fresh rank's start.
    def __init__(self, path):
        self.path = path

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        return False
