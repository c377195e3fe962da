"""How a Python trainable reaches its worker processes: BY REFERENCE.

Each rank of a trial is a fresh Python process running tunerun._worker (or,
with reuse_actors, one kept from an earlier trial). REF names the trainable
by module and qualified name; the worker imports the module and looks the
name up. The function object itself never travels, so:

THE ONE RULE: a trainable is a function (or a TorchTrainer's train loop)
defined with `def` at the top level of a module: an importable module, or
the script you run. In a script, its top-level code runs again in every
worker process (as the module `__tunerun_main__`, with the driver's
sys.argv and sys.path), except what is under `if __name__ == "__main__":`.
Put the driver's work (building the Tuner, fit(), printing results) under
that guard or after the definitions; a top-level fit() in a worker becomes
the worker and never returns.

Breaking the rule is a ValueError from tune.Tuner(...) before anything runs:
a lambda, a function nested in another (a closure), a function defined under
`if __name__ == "__main__":` or in an interactive session (no file).
"""

import importlib
import marshal
import os
import sys

MAIN_ALIAS = "__tunerun_main__"

_RULE = ("tunerun imports the trainable by name in each worker process, so it must be "
         "a function defined with `def` at the top level of a module or of the script")


def make_reference(func, kind: str) -> dict:
    """A JSON-able reference to `func`. Raises ValueError when the rule is broken."""
    qualname = getattr(func, "__qualname__", None)
    module = getattr(func, "__module__", None)
    if qualname is None or module is None or not callable(func):
        raise ValueError(f"{func!r} is not a function; {_RULE}")
    if "<lambda>" in qualname:
        raise ValueError(f"the trainable is a lambda; {_RULE}")
    if "<locals>" in qualname:
        raise ValueError(f"the trainable {qualname} is defined inside another function "
                         f"(a closure); {_RULE}")
    ref = {"kind": kind, "module": module, "qualname": qualname,
           "sys_path": [p for p in sys.path], "argv": list(sys.argv)}
    if module in ("__main__", MAIN_ALIAS):
        main = sys.modules.get("__main__")
        path = getattr(main, "__file__", None) if module == "__main__" else None
        if module == MAIN_ALIAS:
            path = sys.modules[MAIN_ALIAS].__file__
        if not path:
            raise ValueError(f"the trainable {qualname} is defined in an interactive session "
                             f"(no file to import it from); {_RULE}")
        path = os.path.abspath(path)
        top = qualname.split(".")[0]
        names, lines = _top_level_names(path)
        if top not in names:
            raise ValueError(f"the trainable {qualname} is not defined at the top level of "
                             f"{path} (under `if __name__ == \"__main__\":`?); {_RULE}")
        if len(lines.get(top, [])) > 1:
            raise ValueError(f"{top} is defined more than once at the top level of {path} "
                             f"(lines {', '.join(map(str, lines[top]))}): the trial's process "
                             "imports it by name and could run another definition than the "
                             "one given; rename one of them")
        ref["module"] = "__main__"
        ref["file"] = path
    return ref


def _top_level_names(path: str):
    """The names the script binds at its top level, and the lines of each
    def or class statement by name."""
    import ast  # here: every rank imports this module; a script's trainable alone needs ast
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    names, lines = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            lines.setdefault(node.name, []).append(node.lineno)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names, lines


def encode(ref: dict) -> str:
    # marshal, not json: json imports re, a tenth of a fresh rank's start.
    return marshal.dumps(ref).hex()


def decode(text: str) -> dict:
    return marshal.loads(bytes.fromhex(text))


# The rank's program. -S skips site (.pth files, a third of a bare start):
# the package root comes first on sys.path here, and resolve() then gives
# the rank the driver's whole sys.path.
_BOOTSTRAP = ("import sys; sys.path.insert(0, {root!r}); "
              "from tunerun._worker import main; sys.exit(main(sys.argv))")


def worker_argv(ref: dict) -> list:
    """The command line of a rank serving `ref`, with the driver's interpreter."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [sys.executable, "-S", "-c", _BOOTSTRAP.format(root=root), encode(ref)]


def zygote_argv() -> list:
    """The command line of the zygote that forks ranks (tunerun/_zygote.py)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [sys.executable, "-S", "-c",
            f"import sys; sys.path.insert(0, {root!r}); from tunerun._zygote import main; main()"]


def resolve(ref: dict):
    """The function `ref` names, imported in this (worker) process."""
    sys.path[:] = ref["sys_path"]
    try:
        module = _import(ref)
    except ImportError:
        # The rank started without site (-S): .pth files that install import
        # hooks (editable installs) run now, and the import is tried again.
        import site
        site.main()
        sys.path[:0] = [p for p in ref["sys_path"] if p not in sys.path]
        module = _import(ref)
    obj = module
    for part in ref["qualname"].split("."):
        obj = getattr(obj, part)
    return obj


def _import(ref):
    if ref["module"] != "__main__":
        return importlib.import_module(ref["module"])
    sys.argv[:] = ref["argv"]
    module = sys.modules.get(MAIN_ALIAS)
    if module is None:
        import importlib.util as util  # here: only a script's rank needs it
        spec = util.spec_from_file_location(MAIN_ALIAS, ref["file"])
        module = util.module_from_spec(spec)
        sys.modules[MAIN_ALIAS] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[MAIN_ALIAS]
            raise
    return module
