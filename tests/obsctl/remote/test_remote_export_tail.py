"""`obsctl export` of many sessions and `obsctl tail --no-follow` through a server print what
they print on the database; `export -o` writes the same file."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("args", [
    ("export", "--all"),
    ("export", "--all", "--json"),
    ("export", "--agent", "support-bot", "--agent", "code-assistant", "--type", "llm_call"),
    ("export", "--status", "error", "--format", "csv"),
    ("export", "support-004", "--format", "jsonl"),
    ("export", "--since", "2020-01-01T00:00:00Z", "--until", "2030-01-01T00:00:00Z", "--session", "support-004"),
    ("export", "--status", "done"),
    ("export", "--all", "--format", "json"),
    ("tail", "--no-follow"),
    ("tail", "--no-follow", "-n", "5", "--json"),
    ("tail", "--no-follow", "--agent", "support-bot", "--type", "tool_error", "--json"),
    ("tail", "--no-follow", "-n", "0"),
    ("tail", "--lines", "1001"),
])
def test_bulk_export_and_tail_print_the_same(remote, args):
    result = remote.same(*args)
    assert result.exit_code in (0, 2)
    if result.exit_code == 0 and args[-1] != "0":
        assert result.stdout_bytes


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_export_to_a_file_writes_the_same_bytes(remote, tmp_path, fmt):
    local, there = tmp_path / f"local.{fmt}", tmp_path / f"remote.{fmt}"
    here = remote.local("export", "--all", "--format", fmt, "-o", str(local))
    away = remote.remote("export", "--all", "--format", fmt, "-o", str(there))
    assert here.exit_code == away.exit_code == 0, (here.output, away.output)
    assert local.read_bytes() == there.read_bytes() and local.stat().st_size > 1000
