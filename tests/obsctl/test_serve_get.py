"""`obsctl serve --get PATH`: one GET request answered in-process, the body on stdout, exit 0 on
2xx and 1 otherwise (as `printq serve --get`)."""

from __future__ import annotations

import json

from tests.conftest import event


def ingest(cli, tmp_path, *events: dict) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert cli("ingest", str(path)).exit_code == 0


def test_get_health_prints_the_body_and_exits_0(cli):
    result = cli("serve", "--get", "/health")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["status"] == "ok" and body["database"]["quick_check"] == "not run"


def test_get_sessions_reads_the_database_of_db_and_equals_the_cli_json(cli, tmp_path):
    ingest(cli, tmp_path, event("s1", timestamp="2026-01-01T00:00:00Z"),
           event("s2", timestamp="2026-01-02T00:00:00Z"))
    result = cli("serve", "--get", "/sessions")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert [s["session_id"] for s in body["sessions"]] == ["s2", "s1"]
    assert body == json.loads(cli("sessions", "list", "--json").stdout)


def test_an_unknown_path_prints_the_json_error_and_exits_1(cli):
    result = cli("serve", "--get", "/no-such-route")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {"error": "not found: no such route"}


def test_a_missing_session_exits_1(cli):
    result = cli("serve", "--get", "/sessions/nope")
    assert result.exit_code == 1
    assert "nope" in json.loads(result.stdout)["error"]


def test_the_configured_api_key_is_sent(cli):
    result = cli("serve", "--get", "/sessions", env={"SERVICE_API_KEY": "secret"})
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"sessions": [], "total": 0, "next": None}


def test_a_refused_query_prints_the_400_body_and_exits_1(cli):
    result = cli("serve", "--get", "/sessions?limit=0")
    assert result.exit_code == 1
    assert "limit" in json.loads(result.stdout)["error"]


def test_get_leaves_the_callers_logging_alone(cli):
    """`serve --get` runs in the caller's process: it must not install log handlers there
    (a handler left on the root logger printed later warnings of the same process)."""
    import logging

    root = logging.getLogger()
    before = root.handlers[:], root.level
    assert cli("serve", "--get", "/health").exit_code == 0
    assert (root.handlers[:], root.level) == before
