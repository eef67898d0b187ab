"""Any session id works through a server as it does on the database: ids with slashes, dots,
percent signs, spaces, or spelt like a literal route (`batch`, `candidates`), and the empty id
no URL can name."""

from __future__ import annotations

import orjson
import pytest

ODD_IDS = ["team/run-1", "..", ".", "batch", "candidates", "50% off", "a/b/explain", "é ü"]


@pytest.fixture(scope="module", autouse=True)
def odd_sessions(remote, tmp_path_factory):
    events = tmp_path_factory.mktemp("odd-ids") / "odd.jsonl"
    events.write_bytes(b"".join(orjson.dumps({
        "session_id": sid, "event_id": f"odd-{n}", "event_type": "tool_call", "tool_name": "search",
        "timestamp": "2026-11-20T10:00:00Z", "agent_name": "odd-agent", "duration_ms": 120,
        "output": "HTTP 503", "metadata": {"error": True}}) + b"\n" for n, sid in enumerate(ODD_IDS)))
    loaded = remote.local("ingest", str(events))
    assert loaded.exit_code == 0, loaded.output


@pytest.mark.parametrize("sid", ODD_IDS)
@pytest.mark.parametrize("command", [
    ("sessions", "show", "{}", "--json"),
    ("explain", "{}"),
    ("export", "{}", "--format", "csv"),
    ("triage", "show", "{}", "--json"),
    ("postmortem", "show", "{}", "--json"),
])
def test_odd_ids_read_the_same(remote, command, sid):
    result = remote.same(*(a.format(sid) for a in command), volatile=("generated_at",))
    assert result.exit_code == 0 and (f"odd-{ODD_IDS.index(sid)}" if command[0] == "export" else sid) in result.stdout


@pytest.mark.parametrize("command", [
    ("sessions", "show", ""),
    ("explain", ""),
    ("export", ""),
    ("triage", "show", ""),
    ("postmortem", "show", ""),
    ("scorecards", "show", ""),
    ("scorecards", "show", "", "--days", "0"),
    ("webhooks", "remove", ""),
    ("alerts", "ack", ""),
    ("alerts", "rules", "remove", ""),
])
def test_the_empty_id_fails_the_same(remote, command):
    result = remote.same(*command)
    assert result.exit_code in (1, 2) and "Error" in result.stderr
