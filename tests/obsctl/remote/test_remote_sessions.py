"""Reading sessions through a server: list, show, explain, export, compare and analytics print
what they print on the database itself, errors included."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize("args", [
    ("sessions", "list"),
    ("sessions", "list", "--json"),
    ("sessions", "list", "--status", "error", "--limit", "3", "--offset", "1", "--json"),
    ("sessions", "list", "--agent", "support-bot", "--agent", "research-agent", "--tool", "web_search",
     "--min-tokens", "1", "--max-tokens", "100000", "--sort=-tokens", "--json"),
    ("sessions", "list", "--model", "gpt-4o", "--model", "gpt-4o-mini", "--tool", "crm_lookup", "--json"),
    ("sessions", "list", "--has-errors", "--error-type", "rate_limit", "--error-type", "tool_error",
     "--since", "30d", "--sort", "duration", "--json"),
    ("sessions", "list", "--metadata", "channel=chat", "--no-errors", "--sort", "-errors", "--json"),
    ("sessions", "list", "--limit", "2", "--sort", "tokens"),
    ("sessions", "list", "--min-cost", "0.0001", "--sort=-cost", "--json"),
    ("sessions", "show", "support-004"),
    ("sessions", "show", "support-004", "--json"),
    ("sessions", "show", "support-004", "--limit", "2", "--json"),
    ("explain", "support-004"),
    ("explain", "support-004", "--json"),
    ("analytics", "--json"),
    ("export", "support-004", "--format", "csv"),
    ("agents",),
    ("agents", "--days", "1", "--limit", "2", "--json"),
])
def test_reads_print_the_same(remote, args):
    result = remote.same(*args)
    assert result.exit_code == 0 and result.stdout
    if "list" in args and "--json" in args:  # each filter case keeps some sessions, not all 12
        assert 0 < json.loads(result.stdout)["total"] <= 12


@pytest.mark.parametrize("args", [
    ("compare", "support-001", "support-004", "--json"),
    ("compare", "support-001", "support-004"),
    ("export", "support-004"),
])
def test_documents_differ_only_in_when_they_were_made(remote, args):
    result = remote.same(*args, volatile=("compared_at", "exported_at"))
    assert result.exit_code == 0 and result.stdout


@pytest.mark.parametrize("args", [
    ("sessions", "show", "no-such-session"),
    ("explain", "no-such-session", "--json"),
    ("export", "no-such-session"),
    ("compare", "support-001", "no-such-session"),
    ("sessions", "list", "--limit", "0"),
    ("sessions", "list", "--cursor", "WyJ0b2tlbnMiLGZhbHNlLDEsInMiXQ"),
    ("sessions", "show", "support-004", "--cursor", "WyJ0b2tlbnMiLGZhbHNlLDEsInMiXQ"),
    ("sessions", "list", "--sort", "price"),
])
def test_errors_are_the_same_message_and_exit_code(remote, args):
    result = remote.same(*args)
    assert result.exit_code in (1, 2) and "Error" in result.stderr


def test_export_to_a_file_writes_the_servers_document(remote, tmp_path):
    local, there = tmp_path / "local.csv", tmp_path / "remote.csv"
    assert remote.local("export", "support-004", "--format", "csv", "-o", str(local)).exit_code == 0
    result = remote.remote("export", "support-004", "--format", "csv", "-o", str(there))
    assert result.exit_code == 0, result.output
    assert there.read_bytes() == local.read_bytes()
    assert f"to {there}" in result.stderr


def test_a_cursor_pages_the_same_through_a_server(remote):
    first = json.loads(remote.local("sessions", "list", "--sort=-tokens", "--limit", "5", "--json").stdout)
    args = ("sessions", "list", "--sort=-tokens", "--limit", "5", "--cursor", first["next"], "--json")
    result = remote.same(*args)
    assert result.exit_code == 0
    second = json.loads(result.stdout)
    assert not {s["session_id"] for s in first["sessions"]} & {s["session_id"] for s in second["sessions"]}
    assert second["total"] == first["total"] == 12
