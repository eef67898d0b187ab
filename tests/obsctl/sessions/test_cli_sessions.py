"""`obsctl sessions list/show`, and parity of --json with the HTTP API."""

import json

from obsctl.services.ingest import ingest_events
from tests.conftest import event


def seed(db):
    ingest_events(db, [
        event("a", "session_start", agent_name="bot", timestamp="2026-01-01T00:00:00Z", metadata={"k": "v"}),
        event("a", model="gpt-4o", tokens_in=10, tokens_out=5, input_data={"prompt": "hi"}),
        event("b", "tool_call", tool_call={"name": "search", "error": "503"}, timestamp="2026-01-02T00:00:00Z"),
        event("b", "session_end", status="error", timestamp="2026-01-02T00:00:01Z"),
    ])


def test_list_json_equals_api_body(db, cli, client):
    seed(db)
    result = cli("sessions", "list", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == client.get("/sessions").get_json()


def test_list_json_with_filters_equals_api_body(db, cli, client):
    seed(db)
    result = cli("sessions", "list", "--json", "--status", "error", "--limit", "1")
    assert json.loads(result.stdout) == client.get("/sessions?status=error&limit=1").get_json()
    assert json.loads(result.stdout)["total"] == 1


def test_show_json_equals_api_body(db, cli, client):
    seed(db)
    result = cli("sessions", "show", "a", "--json")
    assert json.loads(result.stdout) == client.get("/sessions/a").get_json()


def test_list_plain_output_when_piped(db, cli):
    seed(db)
    out = cli("sessions", "list").stdout.splitlines()
    assert out[0].split("\t") == ["session_id", "agent", "status", "started_at", "events", "errors", "tokens",
                                    "cost"]
    assert out[1].split("\t")[:3] == ["b", "unknown", "error"]
    assert out[2].split("\t")[:3] == ["a", "bot", "active"]


def test_show_unknown_session_exits_1(db, cli):
    result = cli("sessions", "show", "missing")
    assert result.exit_code == 1
    assert result.stderr == "Error: session 'missing' not found\n"


def test_invalid_status_is_a_usage_error(db, cli):
    result = cli("sessions", "list", "--status", "paused")
    assert result.exit_code == 2
    assert ("Invalid value for '--status': status must be one of active, completed, error; "
            "got 'paused'") in result.stderr
    assert "Traceback" not in result.output


def test_terminal_titles_agree_in_number(db, cli, client, terminal):
    """On a terminal the tables carry a title: "1 of 1 session", never "1 sessions"."""
    ingest_events(db, [event("s1")])
    assert "1 of 1 session" in cli("sessions", "list").stdout
    ingest_events(db, [event("s2")])
    assert "2 of 2 sessions" in cli("sessions", "list").stdout
    client.post("/alerts/rules", json={"name": "r", "metric": "error_rate", "operator": ">", "threshold": 5})
    assert "1 alert rule" in cli("alerts", "rules", "list").stdout
    assert "0 webhooks" in cli("webhooks", "list").stdout
    client.put("/sla/targets", json={"agent_name": "a", "metric": "error_rate", "operator": "<=",
                                     "target_value": 5})
    assert "1 SLA target" in cli("sla", "list").stdout


def test_plural():
    from obsctl.text import plural

    assert [plural(n, "session") for n in (0, 1, 2)] == ["0 sessions", "1 session", "2 sessions"]
    assert plural(1, "delivery", "deliveries") == "1 delivery"
    assert plural(3, "delivery", "deliveries") == "3 deliveries"
    assert plural(1234, "token", sep=True) == "1,234 tokens"
