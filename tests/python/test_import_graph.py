"""The package's modules import each other without a circle: parsed from the
source tree (bindings/tunerun), nothing imported.

An edge A -> B is an import of B that runs when A is imported: any import
statement outside a function body. Importing B also initialises B's packages
first, so A -> B adds A -> each package above B, but for A's own packages
(they are in sys.modules, being initialised, before A runs). Imports in
function bodies are not edges: the package keeps them for torch, pandas and
what a bare rank should not load (each module says which); they may not
close a circle either."""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "bindings" / "tunerun"


def modules(package):
    """{dotted name: (path, is a package)}; a .pyi stub names an extension module."""
    found = {}
    for path in sorted(package.rglob("*.py*")):
        if path.suffix not in (".py", ".pyi"):
            continue
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def imports(tree, deferred):
    """The import statements of `tree` that run when its module is imported,
    and with `deferred` those in function bodies too."""
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif deferred or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.Lambda)):
            pending.extend(ast.iter_child_nodes(node))


def ancestors(name):
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def graph(package, deferred=False):
    """{module: the modules importing it imports first}, and the from-imports
    whose name the package binds only lazily (tunerun/_lazy.py), an edge
    the graph cannot see."""
    found = modules(package)
    edges, hidden = {}, []
    for name, (path, is_package) in found.items():
        here = name if is_package else name.rpartition(".")[0]
        targets = set()
        for node in imports(ast.parse(path.read_text(), str(path)), deferred):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            base = node.module or ""
            if node.level:
                base = ".".join(here.split(".")[:len(here.split(".")) - node.level + 1]
                                + ([base] if base else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in found:
                    targets.add(f"{base}.{alias.name}")
                elif base in found:
                    targets.add(base)
                    if found[base][1] and alias.name not in bound_names(found[base][0]):
                        hidden.append(f"{name}: from {base} import {alias.name}")
        targets = {t for t in targets if t in found}
        targets |= {a for t in targets for a in ancestors(t)} - ancestors(name)
        edges[name] = targets - {name}
    return edges, hidden


def bound_names(path):
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def a_cycle(edges):
    """One circle of `edges` as [a, b, ..., a], or None."""
    state, path = {}, []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = "done"
        path.pop()
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_package_has_no_import_circle():
    edges, _ = graph(PACKAGE)
    assert len(edges) > 50, f"found only {len(edges)} modules under {PACKAGE}"
    cycle = a_cycle(edges)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_no_circle_hides_in_function_level_imports():
    cycle = a_cycle(graph(PACKAGE, deferred=True)[0])
    assert cycle is None, "import circle through imports in functions: " + " -> ".join(cycle)


def test_module_level_imports_name_modules_or_bound_names():
    _, hidden = graph(PACKAGE)
    assert hidden == [], ("a lazy package attribute imported at module level (import "
                          "the module that defines it): " + "; ".join(hidden))


def write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_circle_is_found(tmp_path):
    write(tmp_path, {"tunerun/__init__.py": "", "tunerun/a.py": "from tunerun import b\n",
                     "tunerun/b.py": "def f():\n    from tunerun import c\n",
                     "tunerun/c.py": "import tunerun.a\n"})
    assert a_cycle(graph(tmp_path / "tunerun")[0]) is None  # b -> c runs in a function
    assert a_cycle(graph(tmp_path / "tunerun", deferred=True)[0]) is not None
    write(tmp_path, {"tunerun/b.py": "if True:\n    from tunerun.c import f\n"})
    assert a_cycle(graph(tmp_path / "tunerun")[0]) == ["tunerun.a", "tunerun.b", "tunerun.c",
                                                       "tunerun.a"]


def test_a_circle_through_a_package_initialiser_is_found(tmp_path):
    write(tmp_path, {"tunerun/__init__.py": "", "tunerun/x.py": "from tunerun.p.q import f\n",
                     "tunerun/p/__init__.py": "from tunerun.x import g\n",
                     "tunerun/p/q.py": "from tunerun.p import r\n", "tunerun/p/r.py": ""})
    assert a_cycle(graph(tmp_path / "tunerun")[0]) == ["tunerun.p", "tunerun.x", "tunerun.p"]
