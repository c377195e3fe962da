"""How a Python trainable reaches its worker processes: BY VALUE.

The driver pickles the trainable with cloudpickle when fit() starts and
writes it once per experiment, <storage_path>/<name>/trainable.pkl (again on
Tuner.restore, from the trainable restore() is given). Each rank of a trial
is a fresh Python process running tunerun._worker (forked from the zygote,
or started by exec, or with reuse_actors kept from an earlier trial of the
same fit()); it unpickles the file once and runs the object for each trial.
The script is never run again in a worker: its top-level code runs once,
in the driver.

What pickles: functions (closures, lambdas, functions defined under `if
__name__ == "__main__":` or twice in one script: the object given is the
one that runs), functools.partial, callable objects, tune.Trainable
classes, with_parameters / with_resources wrappers in any nesting. As
cloudpickle does it: what the script (module __main__) defines travels by
value, with the globals it uses as they are when fit() starts; functions
and classes of importable modules travel by reference, imported in the rank
with the driver's sys.path. tune.with_parameters' values are pickled when
it is called and written once per experiment, beside the trainable
(with_parameters.pkl); each rank loads them once.

The rank learns where the files are from REF, a small dict (encode()) on
its command line.
"""

import marshal
import os
import sys

TRAINABLE_FILE = "trainable.pkl"
PARAMETERS_FILE = "with_parameters.pkl"
OBJECTS_FILE = "param_objects.pkl"  # the param_space's non-JSON values (tune/_values.py)


def dumps(obj, what):
    """`obj` pickled by cloudpickle; ValueError naming `what` when it cannot be."""
    import cloudpickle  # here: a rank unpickles with pickle, importing cloudpickle only if needed
    try:
        return cloudpickle.dumps(obj)
    except Exception as e:
        raise ValueError(f"{what} cannot be pickled ({type(e).__name__}: {e}); it travels to "
                         "the trial's processes by cloudpickle") from None


def make_reference(kind: str) -> dict:
    """The rank's REF for a trainable of `kind` ("function", "class" or
    "trainer"); fit() adds the paths of the files it writes."""
    return {"kind": kind, "sys_path": list(sys.path)}


def write_atomically(path, data: bytes):
    """`path` holds `data` whole or not at all (a rank may read it any time)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def encode(ref: dict) -> str:
    # marshal, not json: json imports re, a tenth of a fresh rank's start.
    return marshal.dumps(ref).hex()


def decode(text: str) -> dict:
    return marshal.loads(bytes.fromhex(text))


# The rank's program. -S skips site (.pth files, a third of a bare start):
# the package root comes first on sys.path here, and the rank then takes
# the driver's whole sys.path from REF.
_BOOTSTRAP = ("import sys; sys.path.insert(0, {root!r}); "
              "from tunerun._worker import main; sys.exit(main(sys.argv))")


def _root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def worker_argv(ref: dict) -> list:
    """The command line of a rank serving `ref`, with the driver's interpreter."""
    return [sys.executable, "-S", "-c", _BOOTSTRAP.format(root=_root()), encode(ref)]


def zygote_argv() -> list:
    """The command line of the zygote that forks ranks (tunerun/_zygote.py);
    it gets the driver's sys.path, where cloudpickle is found."""
    return [sys.executable, "-S", "-c",
            f"import sys; sys.path.insert(0, {_root()!r}); from tunerun._zygote import main; "
            "main()", encode({"sys_path": list(sys.path)})]


def use_sys_path(ref: dict):
    """This (worker) process imports as the driver does: the driver's sys.path."""
    sys.path[:] = ref["sys_path"]


def load(ref: dict):
    """The trainable `ref` names, unpickled in this (worker) process; the
    with_parameters values come separately (load_parameters)."""
    return _with_site(lambda: _unpickle(ref["trainable"]), ref)


def load_parameters(ref: dict) -> dict:
    """with_parameters' keyword arguments of every wrapper, the outer one's
    last (the file holds one pickle per wrapper, innermost first)."""
    path = ref.get("parameters")
    if path is None:
        return {}

    def read():
        import pickle
        kwargs = {}
        with open(path, "rb") as f:
            while True:
                try:
                    kwargs.update(pickle.load(f))
                except EOFError:
                    return kwargs

    return _with_site(read, ref)


def load_objects(ref):
    """The pickled param_space objects (tune/_values.py) as bytes, or None:
    each trial unpickles its own copy."""
    path = ref.get("objects")
    if path is None:
        return None
    with open(path, "rb") as f:
        return f.read()


def _unpickle(path):
    import pickle  # here: a bare rank's start skips it until the file is read
    with open(path, "rb") as f:
        return pickle.load(f)


def _with_site(load_it, ref):
    try:
        return load_it()
    except ImportError:
        # The rank started without site (-S): .pth files that install import
        # hooks (editable installs) run now, and the load is tried again.
        import site
        site.main()
        sys.path[:0] = [p for p in ref["sys_path"] if p not in sys.path]
        return load_it()
