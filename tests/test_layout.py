"""The package's shape: layers one way, no import cycle, no private name crossing a module, small units.

Walks the source of :mod:`spartition` and of its families (the repository
folder ``dags/``, installed as ``spartition.families``) with :mod:`ast`,
function-level imports included, so a deferred import counts like any other.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "spartition"
FAMILIES = "spartition.families"
#: Where each package's source lives: the families are a folder of the repository of their own.
SOURCES = {"spartition": ROOT, FAMILIES: ROOT.parent / "dags"}

#: Functions allowed past the size limit, each with the reason.
LONG_FUNCTIONS = {
    # the vectorised replay checks every rule of the game in one pass over numpy arrays;
    # split up it would re-walk the move arrays once per rule
    "spartition.core.game.replay",
}
#: Modules allowed past the size limit, each with the reason.
LONG_MODULES: set = set()  # modules allowed past the size limit, each with the reason
MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 80


def module_name(package: str, folder: Path, path: Path) -> str:
    parts = [package, *path.relative_to(folder).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files():
    for package, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            yield module_name(package, folder, path), path


MODULES = dict(source_files())


def test_the_walk_sees_the_engine_and_the_families():
    assert {"spartition.core.game", "spartition.exact.solve", FAMILIES, f"{FAMILIES}.classic.dag",
            f"{FAMILIES}.attention.forward.flash"} <= set(MODULES)
    assert not (ROOT / "families").exists(), "spartition/families must not exist in the checkout (no link, no copy)"


def resolve(name: str) -> str | None:
    """The spartition module ``name`` refers to (a module, or the package it names), or None."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(path: Path, here: str):
    """(imported module, names imported from it, line) for every import in the file."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, (), node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = here.split(".")
                base = ".".join(pkg[: len(pkg) - node.level + (1 if path.name == "__init__.py" else 0)] + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in MODULES:  # `from pkg import module`
                    yield sub, (), node.lineno
                else:
                    yield base, (alias.name,), node.lineno


def graph():
    edges = {}
    for name, path in MODULES.items():
        targets = set()
        for target, _, _ in imports(path, name):
            if target.startswith("spartition"):
                mod = resolve(target)
                if mod and mod != name:
                    targets.add(mod)
        edges[name] = targets
    return edges


def engine(name: str) -> bool:
    return not (name == FAMILIES or name.startswith(FAMILIES + "."))


def test_no_import_cycle():
    edges = graph()
    state, stack, cycles = {}, [], []

    def visit(v):
        state[v] = "open"
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if state.get(w) == "open":
                cycles.append(stack[stack.index(w):] + [w])
            elif w not in state:
                visit(w)
        stack.pop()
        state[v] = "done"

    for v in sorted(edges):
        if v not in state:
            visit(v)
    # a package's __init__ importing its own submodule is how a package exports: not a cycle
    real = [c for c in cycles if not all(a.startswith(b + ".") or b.startswith(a + ".") for a, b in zip(c, c[1:]))]
    assert not real, "import cycles: " + "; ".join(" -> ".join(c) for c in real)


def test_the_engine_never_imports_a_family():
    bad = [f"{name} imports {target} (line {line})"
           for name, path in MODULES.items() if engine(name)
           for target, _, line in imports(path, name) if not engine(target)]
    assert not bad, bad


def test_no_private_name_crosses_a_module():
    bad = []
    for name, path in MODULES.items():
        for target, names, line in imports(path, name):
            if not target.startswith("spartition") or resolve(target) == name:
                continue
            bad += [f"{name}:{line} imports {target}.{n}" for n in names if n.startswith("_") and not n.startswith("__")]
    assert not bad, bad


def test_the_cli_is_thin_and_modules_are_small():
    long = [f"{name}: {len(path.read_text().splitlines())} lines" for name, path in MODULES.items()
            if len(path.read_text().splitlines()) > MAX_MODULE_LINES and name not in LONG_MODULES]
    assert not long, long


def code_lines(fn: ast.AST, source: list) -> int:
    """Lines of code of a function: no docstring, comment or blank line."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    if not body:
        return 0
    lines = source[body[0].lineno - 1: fn.end_lineno]
    return sum(1 for ln in lines if ln.strip() and not ln.strip().startswith("#"))


def test_no_function_over_the_size_limit():
    long = []
    for name, path in MODULES.items():
        text = path.read_text()
        source = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{name}.{node.name}"
                n = code_lines(node, source)
                if n > MAX_FUNCTION_LINES and qual not in LONG_FUNCTIONS:
                    long.append(f"{qual}: {n} lines")
    assert not long, long


@pytest.mark.parametrize("api", ["Add", "Solve", "Value", "Not", "NewBoolVar", "NewIntVar", "AddBoolOr", "AddImplication", "OnlyEnforceIf",
                                 "Minimize", "Maximize", "AddHint", "BestObjectiveBound", "ObjectiveValue",
                                 "BooleanValue", "AddMaxEquality", "AddAtMostOne", "AddExactlyOne"])
def test_cp_sat_is_called_by_its_pep8_names(api):
    hits = [f"{name}:{i + 1}" for name, path in MODULES.items()
            for i, line in enumerate(path.read_text().splitlines()) if f".{api}(" in line]
    assert not hits, hits


def status_literals(path: Path) -> list:
    """(line, name) of every string constant equal to a :class:`~spartition.status.Status` name, docstrings and ``__all__`` aside."""
    from spartition.status import Status

    names = {s.value for s in Status}
    tree = ast.parse(path.read_text(), str(path))
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            skip.add(id(body[0].value))
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            skip.update(id(e) for e in ast.walk(node.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
            and id(node) not in skip]


def test_statuses_are_named_by_the_enum_only():
    """A status is produced and compared as ``Status.X``: a literal ``"OPTIMAL"`` would escape a rename or a typo check."""
    bad = [f"{name}:{line} {text!r}" for name, path in MODULES.items() if name != "spartition.status"
           for line, text in status_literals(path)]
    assert not bad, bad


def test_the_status_check_sees_a_literal(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('"""A docstring naming OPTIMAL is fine."""\n__all__ = ["SKIPPED"]\nok = r.status == "OPTIMAL"\n')
    assert status_literals(probe) == [(3, "OPTIMAL")]


def family_names_registered() -> set:
    """The families the project's own kernels register.

    The engine's own family (``file``, a DAG read from a file) lives in the
    engine and is named there.
    """
    from spartition.core.registry import FAMILIES

    return {name for name in FAMILIES if FAMILIES.package(name) == "spartition" and name != "file"}


def engine_strings(path: Path) -> list:
    """(line, text) of every string constant of a module but its docstrings."""
    tree = ast.parse(path.read_text(), str(path))
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs]


#: The authoring toolkit's summation shapes: ``chain`` names a shape there, not the family.
SUMS, SUM_SHAPES = "spartition.authoring.sums", ("chain", "tree")


def test_the_engine_names_no_family():
    """Families, their papers' parameters and the built-in study come from the families' registrations (docstrings aside)."""
    families = family_names_registered()
    assert {"attention-forward", "fft", "chain"} <= families
    bad = [f"{name}:{line} {text[:60]!r}" for name, path in MODULES.items() if engine(name)
           for line, text in engine_strings(path)
           if (text in families and not (name == SUMS and text in SUM_SHAPES)) or "attention" in text.lower()]
    assert not bad, bad


#: The engine's layers, lowest first: a module imports from its own layer or a lower one only
#: (the authoring toolkit sits on the game; the CLI on everything; the kernels above the engine).
LAYERS = ("spartition.errors", "spartition.status", "spartition.finding", "spartition.settings", "spartition.cpsat", "spartition.core",
          "spartition.authoring", "spartition.partition", "spartition.exact", "spartition.certify", "spartition.study",
          "spartition.plugins", "spartition.cli", FAMILIES)


def layer(name: str) -> int | None:
    found = [i for i, prefix in enumerate(LAYERS) if name == prefix or name.startswith(prefix + ".")]
    return found[-1] if found else None


def test_the_layers_point_one_way():
    """No arrow up: ``core`` imports nothing of ``exact``, ``exact`` nothing of ``study``, and so on."""
    assert layer("spartition.core.search") == 5 and layer("spartition.exact.search") == 8
    up = [f"{name} -> {target}" for name, targets in graph().items() for target in targets
          if layer(name) is not None and layer(target) is not None and layer(target) > layer(name)]
    assert not up, up


def test_no_kernel_module_over_500_lines():
    long = [f"{name}: {len(path.read_text().splitlines())} lines" for name, path in MODULES.items()
            if not engine(name) and len(path.read_text().splitlines()) > 500]
    assert not long, long


def test_the_command_line_loads_no_heavy_module_before_its_ctrl_c_handler():
    # spartition/__init__ imported networkx and numpy (most of a second): a Ctrl-C then gave a traceback and no
    # exit 130, because cli.main sets its handler only once imported
    import subprocess
    import sys

    code = ("import sys, spartition.cli.main; "
            "print(sorted(m for m in ('networkx', 'numpy', 'ortools', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
