"""The printq docs page stays true: every `$ printq ...` example in a console block is run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from printq.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
SOURCES = [ROOT / "docs" / "printq.md"]


def printq_section() -> str:
    return "\n".join(source.read_text() for source in SOURCES if source.exists())


def examples() -> list[tuple[str, str]]:
    """(command line, expected output) for every `$ printq` line in a ```console block."""
    found = []
    for block in re.findall(r"```console\n(.*?)```", printq_section(), flags=re.DOTALL):
        command, output = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command:
                    found.append((command, "\n".join(output)))
                command, output = line[2:], []
            else:
                output.append(line)
        if command:
            found.append((command, "\n".join(output)))
    return found


def test_the_section_has_examples_of_every_command():
    section = printq_section()
    if not section:
        pytest.fail("no docs/printq.md")
    assert len(examples()) >= 10
    for usage in ("printq livePercent greater 50", "printq metrics", "printq serve", "printq query",
                  "printq --version", "PRINTQ_DATA", "PRINTQ_CACHE_DIR", "--data"):
        assert usage in section, usage


@pytest.mark.parametrize("command, expected", examples())
def test_console_examples_print_what_the_docs_say(command, expected, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("PRINTQ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PRINTQ_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    args = shlex.split(command)
    assert args[0] == "printq"
    status = re.search(r"\n?\[exit (\d+)\]$", expected)
    code = main(args[1:])
    out, err = capsys.readouterr()
    assert (out + err).rstrip("\n") == expected[:status.start()] if status else expected
    assert (code or 0) == (int(status.group(1)) if status else 0)
