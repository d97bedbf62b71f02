"""Structure the codebase keeps: no import cycle among qmltest's modules (imports anywhere in a
file, function-level ones included: a deferred import hides a cycle, it does not remove it);
the mutation package in small files and short functions."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "qmltest"


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Edges module -> qmltest module it imports anywhere in its file (module level, inside
    functions, under TYPE_CHECKING): every such edge is a dependency a reader has to follow."""
    modules = {_module(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(
                        package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                    )
                # `from pkg import submodule` needs the submodule; `from pkg import name`, the package
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != name and t.startswith("qmltest"):
                    graph[name].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_in_qmltest() -> None:
    found = cycles(import_graph())
    assert found == [], found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_module_reads_in_one_sitting() -> None:
    """Issues 28 and 58: no file in qmltest/ over 400 lines, no function over 80."""
    long_files, long_functions = [], []
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text()
        if len(text.splitlines()) > 400:
            long_files.append(path.name)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 80:
                long_functions.append(f"{path.name}:{node.name}")
    assert not long_files and not long_functions, (long_files, long_functions)


def test_the_top_level_holds_at_most_ten_modules() -> None:
    """Issue 58: the model format, utilities, run folders and report writers live in packages of
    their own; what stays at the top is the facade and model-level commands."""
    loose = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(loose) <= 10, loose


def test_no_two_modules_share_a_name() -> None:
    """Issue 58: aer, criteria, device, evaluate, gates and registry each existed twice."""
    from collections import Counter

    names = Counter(p.stem for p in ROOT.rglob("*.py") if p.name != "__init__.py")
    assert [n for n, k in names.items() if k > 1] == []


def test_mutation_lives_in_rooms_of_its_own() -> None:
    """Issue 58: operators, strategies, evidence and judge are sub-packages; only the options
    record and the pipeline that wires them stay loose in mutation/."""
    loose = sorted(p.name for p in (ROOT / "mutation").glob("*.py"))
    assert loose == ["__init__.py", "facade.py", "options.py", "pipeline.py"], loose
    assert {p.name for p in (ROOT / "mutation").iterdir() if p.is_dir() and p.name != "__pycache__"} == {
        "operators",
        "strategies",
        "evidence",
        "judge",
    }


def test_every_module_says_its_job() -> None:
    """The layout page lists every module with its docstring's first paragraph: none may lack one."""
    missing = [
        str(p.relative_to(ROOT.parent))
        for top in (ROOT, ROOT.parent / "cli")
        for p in sorted(top.rglob("*.py"))
        if not ast.get_docstring(ast.parse(p.read_text()))
    ]
    assert missing == []


def test_placement_options_are_declared_once() -> None:
    """Issue 46: `--workers` and `--cluster` are declared in cli/options.py alone and shared."""
    cli = ROOT.parent / "cli"
    for flag in ('"--workers"', '"--cluster"'):
        where = [p.name for p in sorted(cli.glob("*.py")) for line in p.read_text().splitlines() if flag in line]
        assert where == ["options.py"], (flag, where)


def test_every_package_is_in_the_wheel() -> None:
    """pyproject lists its packages by hand: a new subpackage left out installs from a checkout
    (editable) but not from a wheel."""
    import tomllib

    listed = set(tomllib.loads((ROOT.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {_module(p) for p in ROOT.rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)


def id_keyed_caches(root: Path) -> list[str]:
    """Module-level dicts (or lists) of the .py files under `root` that are indexed with id()."""
    import re

    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        names = set()
        for node in ast.parse(text).body:
            target = node.target if isinstance(node, ast.AnnAssign) else None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
            if isinstance(target, ast.Name) and isinstance(
                getattr(node, "value", None), (ast.Dict, ast.Call, ast.List)
            ):
                names.add(target.id)
        for name in sorted(names):
            if re.search(rf"\b{re.escape(name)}(\.get\(|\[|\.setdefault\(|\.pop\()id\(", text):
                found.append(f"{path.stem}.{name}")
    return found


def test_no_module_level_cache_is_keyed_by_id() -> None:
    """Issue 44: caches live on the object whose lifetime they share or are keyed by content."""
    assert id_keyed_caches(ROOT) == []


def test_the_id_cache_finder_finds_those_of_the_commit_before_the_seam(tmp_path) -> None:
    """At eb41399 (before issue 44) it finds the issue's module caches keyed by id()."""
    import subprocess

    repo = ROOT.parent
    have = subprocess.run(["git", "cat-file", "-e", "eb41399"], cwd=repo, capture_output=True).returncode == 0
    if not have:
        (tmp_path / "m.py").write_text("_C: dict = {}\n\n\ndef f(x):\n    return _C.get(id(x))\n")
        assert id_keyed_caches(tmp_path) == ["m._C"]
        return
    for rel in ("simulate/density.py", "simulate/statevector.py", "mutation/qml.py", "mutation/edit.py"):
        (tmp_path / rel.replace("/", "_")).write_text(
            subprocess.run(["git", "show", f"eb41399:qmltest/{rel}"], cwd=repo, capture_output=True, text=True).stdout
        )
    assert id_keyed_caches(tmp_path) == [
        "mutation_edit._ROWS",
        "mutation_qml._UNITS",
        "simulate_density._SUPEROPS",
        "simulate_statevector._BY_GATE",
    ]
