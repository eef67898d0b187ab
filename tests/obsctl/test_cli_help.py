"""Every command documents itself with an example; completion scripts are current."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer

ROOT = Path(__file__).resolve().parent.parent.parent


def walk(command, path=()):
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from walk(sub, (*path, name))


def obsctl_commands():
    from obsctl.cli.main import app

    return list(walk(typer.main.get_command(app), ("obsctl",)))


@pytest.mark.parametrize("path,command", obsctl_commands(), ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_every_obsctl_command_has_help_with_an_example(path, command):
    from typer.testing import CliRunner

    from obsctl.cli.main import app

    result = CliRunner().invoke(app, [*path[1:], "--help"])
    assert result.exit_code == 0, result.output
    assert "Example" in result.stdout, f"{' '.join(path)} --help has no example"
    assert (command.help or "").strip(), f"{' '.join(path)} has no help text"


@pytest.mark.parametrize("path,command", obsctl_commands(), ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_help_shows_arguments_the_unix_way(path, command):
    """`SESSION_ID`, `[FILE|-]`: no `{session_id}` template-like placeholder, no doubled brackets."""
    from typer.testing import CliRunner

    from obsctl.cli.main import app

    usage = CliRunner().invoke(app, [*path[1:], "--help"]).stdout.split("\n\n")[0]
    assert not re.search(r"\{\w+\}|\[\[|\]\]", usage), usage
    for param in getattr(command, "params", []):
        if param.param_type_name == "argument":
            assert param.metavar in usage, (usage, param.metavar)


def test_usage_of_commands_with_arguments():
    from typer.testing import CliRunner

    from obsctl.cli.main import app

    def usage(*args):
        return CliRunner().invoke(app, [*args, "--help"]).stdout.splitlines()[0]

    assert usage("explain") == "Usage: obsctl explain [OPTIONS] SESSION_ID"
    assert usage("ingest") == "Usage: obsctl ingest [OPTIONS] [FILE|-]"
    assert usage("sla", "set") == "Usage: obsctl sla set [OPTIONS] AGENT METRIC OPERATOR VALUE"
    missing = CliRunner().invoke(app, ["compare", "a"])
    assert missing.exit_code == 2 and "Missing argument 'SESSION_B'." in missing.stderr


def test_every_json_capable_listing_says_so():
    missing = []
    for path, command in obsctl_commands():
        params = {p.name for p in getattr(command, "params", [])}
        if path[-1] in {"list", "show", "metrics", "events", "deliveries", "history", "summary"} and "json_" not in params:
            missing.append(" ".join(path))
    assert missing == []


@pytest.mark.parametrize("args", [["--help"], ["metrics", "--help"], ["serve", "--help"]])
def test_printq_help_has_examples(args):
    exe = Path(sys.executable).with_name("printq")
    result = subprocess.run([str(exe), *args], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "Example" in result.stdout


def test_completion_scripts_are_current(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "completions" / "generate.py"), str(tmp_path)],
                   check=True, capture_output=True)
    for generated in sorted(tmp_path.iterdir()):
        committed = ROOT / "completions" / generated.name
        assert committed.exists(), f"{committed} missing: run make completions"
        assert committed.read_text() == generated.read_text(), f"{committed.name} is stale: run make completions"


def test_bash_completion_completes_subcommands():
    exe = Path(sys.executable).with_name("obsctl")
    env = dict(os.environ, COMP_WORDS="obsctl sess", COMP_CWORD="1", _OBSCTL_COMPLETE="complete_bash")
    result = subprocess.run([str(exe)], env=env, capture_output=True, text=True)
    assert "sessions" in result.stdout.split()
