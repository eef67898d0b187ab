"""No test can skip, or fail to import, because a Python package is missing: every package the
tests import is declared (the project's dependencies or its `test` extra) and no test guards an
import with `pytest.importorskip` or `except ImportError`."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from fnmatch import fnmatch
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCAL = {"obsctl", "printq", "tests"}


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement string ("Jsonschema_RS>=0.60" -> jsonschema-rs)."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", requirement).group()).lower()


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {_name(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]}


# The OTLP capture kit and the per-client capture scripts run in throwaway environments with the
# frameworks they record (tests/data/otlp/capture_kit/README.md); no test imports them.
CAPTURE_SCRIPTS = ("tests/data/otlp/capture_kit/*", "tests/data/otlp/*/capture/*")  # fnmatch: * spans "/"


def python_files() -> list[Path]:
    return sorted(path for path in (ROOT / "tests").rglob("*.py")
                  if not any(fnmatch(path.relative_to(ROOT).as_posix(), p) for p in CAPTURE_SCRIPTS))


def third_party_imports(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            modules.add(node.module.split(".")[0])
    return {m for m in modules if m not in sys.stdlib_module_names and m not in LOCAL}


def test_every_package_the_tests_import_is_declared():
    providers = packages_distributions()
    available = declared()  # directly: a package another one happens to pull in may go away
    undeclared = {}
    for path in python_files():
        for module in third_party_imports(path):
            dists = {_name(d) for d in providers.get(module, ())}
            if not dists & available:
                undeclared.setdefault(module, []).append(str(path.relative_to(ROOT)))
    assert undeclared == {}, f"imported by tests but not declared in pyproject.toml: {undeclared}"


def test_no_test_skips_on_a_missing_import():
    guarded = []
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "importorskip":
                guarded.append(f"{path.relative_to(ROOT)}:{node.lineno} importorskip")
            if isinstance(node, ast.ExceptHandler) and node.type is not None and any(
                    isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError")
                    for n in ast.walk(node.type)):
                guarded.append(f"{path.relative_to(ROOT)}:{node.lineno} except ImportError")
    assert guarded == []


def test_a_package_only_pulled_in_by_another_counts_as_undeclared():
    # jsonschema_rs came with schemathesis until it was declared; the check must not accept that.
    providers = packages_distributions()
    assert {_name(d) for d in providers["jsonschema_rs"]} == {"jsonschema-rs"}
    assert "jsonschema-rs" in declared() and "protobuf" in declared()
