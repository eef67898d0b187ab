"""Start-up: the root command imports no service, its help and completion name every command
from obsctl/cli/main.py's table without importing it, and that table says what each command
says of itself. (How fast it is, as a ratio to a bare interpreter, is bench/startup.py's.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer._click.utils import make_default_short_help
from typer.testing import CliRunner

from obsctl.cli.main import Commands, app

HEAVY = ("obsctl.services", "obsctl.store", "obsctl.web", "obsctl.models")
_REPORT = (f"import json, sys; print(json.dumps(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))), "
           "file=sys.stderr)")


def _imported_after(code: str, env: dict | None = None) -> list[str]:
    """The heavy modules a fresh interpreter has imported after running `code`."""
    script = f"import atexit\natexit.register(lambda: exec({_REPORT!r}))\n{code}"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_importing_the_root_command_imports_no_service_store_or_web_module():
    assert _imported_after("import obsctl.cli.main") == []


def test_root_help_and_completion_import_no_command_module():
    help_run = "from obsctl.cli.main import app\ntry:\n    app(['--help'], prog_name='obsctl')\nexcept SystemExit:\n    pass"
    assert _imported_after(help_run) == []
    completion = help_run.replace("['--help']", "[]")
    assert _imported_after(completion, {"_OBSCTL_COMPLETE": "complete_bash", "COMP_WORDS": "obsctl ",
                                        "COMP_CWORD": "1"}) == []


def test_completing_a_command_name_offers_every_command():
    done = subprocess.run([str(Path(sys.executable).parent / "obsctl")], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "_OBSCTL_COMPLETE": "complete_bash", "COMP_WORDS": "obsctl s",
                               "COMP_CWORD": "1"})
    assert done.stdout.split() == [name for name in Commands.LAZY if name.startswith("s")]


def test_a_command_runs_after_it_is_loaded_on_demand():
    result = CliRunner().invoke(app, ["sessions", "list", "--limit", "0"])
    assert result.exit_code == 2 and "--limit" in result.output


@pytest.mark.parametrize("name", list(Commands.LAZY))
def test_each_summary_is_the_commands_own_first_sentence(name):
    command = typer.main.get_command(app).commands[name]
    assert command.name == name
    for limit in (45, 60, 80, 120, 400):
        assert make_default_short_help(Commands.LAZY[name].summary, limit) == command.get_short_help_str(limit)


def test_the_table_names_every_command_module():
    import obsctl.cli

    modules = {p.stem for p in Path(obsctl.cli.__file__).parent.glob("*.py")}
    shared = {"__init__", "base", "completion", "lazy", "main", "options", "output", "target"}
    assert modules - shared == {lazy.module for lazy in Commands.LAZY.values()}
