"""No import circles among the obsctl and printq modules.

The graph is built from the source (every `import` and `from ... import`, including the ones
inside functions, which only postpone a circle to run time), so a circle fails here before it
can make an import order matter.

A package's `__init__` counts as a module of its own: importing `a.b.c` runs `a/__init__.py` and
`a/b/__init__.py` first (an edge to each package the importer is not already inside), and
`from a.b import c` reads the package `a.b` (an edge to it as well as to `a.b.c`). So a package
whose `__init__` imports a submodule that imports back from the package is a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("obsctl", "printq")


def module_files(root: Path, packages: tuple[str, ...]) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is_package) for every module of `packages` under `root`."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def _known(name: str, modules: dict) -> str | None:
    """The module `name` refers to, or the nearest enclosing known package; None if external."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imported_modules(source: str, name: str, is_package: bool, modules: dict) -> set[str]:
    """The project modules that the module `name` imports anywhere in its body."""
    package = name if is_package else name.rpartition(".")[0]
    inside = set(_packages_of(name))  # initialised before this module runs
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing module's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module
            # `from pkg import mod` imports the module pkg.mod and reads the package pkg;
            # `from mod import name` imports mod.
            targets = [origin, *(f"{origin}.{alias.name}" for alias in node.names
                                 if f"{origin}.{alias.name}" in modules)]
        else:
            continue
        for target in filter(None, (_known(target, modules) for target in targets)):
            found.add(target)
            found.update(p for p in _packages_of(target) if p in modules and p not in inside)
    found.discard(name)
    return found


def _packages_of(name: str) -> list[str]:
    """The packages whose `__init__` runs before the module `name`: a.b.c -> [a, a.b]."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def import_graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    modules = module_files(root, packages)
    return {name: imported_modules(path.read_text(encoding="utf-8"), name, is_package, modules)
            for name, (path, is_package) in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path that returns to its start) per strongly connected group of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iterative so deep graphs cannot overflow
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_path_in(group, graph) for group in groups]


def _path_in(group: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the first module of a strongly connected group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph[node] & group):
                if successor == start:
                    return paths[node] + [start]
                if successor not in paths:
                    paths[successor] = paths[node] + [successor]
                    following.append(successor)
        frontier = following
    raise AssertionError(f"{sorted(group)} is not a cycle")  # pragma: no cover


def test_obsctl_and_printq_have_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in found)


def test_the_graph_sees_imports_inside_functions():
    graph = import_graph()
    # printq.cli imports printq.commands only inside main(), to keep typer off the query path.
    assert "printq.commands" in graph["printq.cli"]
    assert "obsctl.web.routes" in graph["obsctl.web.app"]


@pytest.mark.parametrize("files, expected", [
    ({"a.py": "import pkg.b\n", "b.py": "def f():\n    from pkg import a\n"}, [["pkg.a", "pkg.b", "pkg.a"]]),
    ({"a.py": "from . import b\n", "b.py": "from .c import x\n", "c.py": "from pkg.a import y\n"},
     [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]),
    ({"a.py": "from pkg.b import x\n", "b.py": "import json\n"}, []),
], ids=["inside-a-function", "relative-three-step", "acyclic"])
def test_cycles_are_found_and_reported_as_paths(tmp_path, files, expected):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in files.items():
        (package / name).write_text(text)
    assert cycles(import_graph(tmp_path, ("pkg",))) == expected


def test_a_package_init_importing_a_module_that_imports_back_from_it_is_a_cycle(tmp_path):
    package = tmp_path / "pkg"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("def use():\n    from pkg.inner.worker import work\n")
    (package / "inner" / "__init__.py").write_text("")
    (package / "inner" / "worker.py").write_text("from pkg import helpers\n")
    (package / "helpers.py").write_text("")
    assert cycles(import_graph(tmp_path, ("pkg",))) == [["pkg", "pkg.inner.worker", "pkg"]]
    (package / "inner" / "worker.py").write_text("import pkg.helpers as helpers\n")
    assert cycles(import_graph(tmp_path, ("pkg",))) == []
    # Importing a module of another package runs that package's __init__ first.
    (package / "inner" / "__init__.py").write_text("from pkg import use\n")
    (package / "helpers.py").write_text("import pkg.inner.worker\n")
    assert cycles(import_graph(tmp_path, ("pkg",))) == [["pkg", "pkg.inner", "pkg"]]
