"""Every use case a command runs through `cli.base.run` has its remote counterpart, with the
same parameters: a command never finds out under --url that it cannot run."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from obsctl.cli.base import remote_use_case

CLI = Path(__file__).resolve().parents[3] / "obsctl" / "cli"


def _use_cases() -> list[tuple[str, object]]:
    """(where, service function) for each `run(ctx, FUNCTION, ...)` in obsctl/cli/."""
    found = []
    for path in sorted(CLI.glob("*.py")):
        module = importlib.import_module(f"obsctl.cli.{path.stem}")
        tree = ast.parse(path.read_text())
        for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
            names = dict(vars(module))
            for node in ast.walk(function):  # imports inside the command (lazy ones)
                if isinstance(node, ast.ImportFrom) and node.module:
                    names.update({a.asname or a.name: _imported(node.module, a.name) for a in node.names})
            for call in ast.walk(function):
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "run"
                        and len(call.args) >= 2):
                    found.append((f"{path.name}:{call.lineno}", eval(ast.unparse(call.args[1]), names)))  # noqa: S307
    return found


def _imported(module: str, name: str):
    source = importlib.import_module(module)
    return getattr(source, name) if hasattr(source, name) else importlib.import_module(f"{module}.{name}")


USE_CASES = _use_cases()


def test_the_commands_run_use_cases_through_run():
    assert len(USE_CASES) >= 30


@pytest.mark.parametrize(("where", "use_case"), USE_CASES, ids=[w for w, _ in USE_CASES])
def test_each_use_case_has_a_remote_counterpart_with_its_parameters(where, use_case):
    remote = remote_use_case(use_case)
    local_params = list(inspect.signature(use_case).parameters)[1:]
    remote_params = list(inspect.signature(remote).parameters)[1:]
    # The remote side may leave out a trailing test-only clock (`at`) or timeout, and `checked`
    # (webhook URL checks made before a local transaction; the server makes its own).
    missing = [p for p in local_params if p not in remote_params and p not in ("at", "timeout", "checked")]
    assert not missing, f"{where}: {remote.__module__}.{remote.__name__} lacks {missing}"


def test_local_commands_do_not_load_the_http_client():
    """requests and the client cost ~180 ms of start-up; only --url needs them."""
    import subprocess
    import sys

    code = ("import sys; from obsctl.cli.main import app; "
            "print(sorted(m for m in ('requests', 'obsctl.client.http') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
