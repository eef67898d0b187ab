"""tool_call in the original service's SDK spelling: `tool_name`/`tool_input`/`tool_output`,
and a tool's failure as an `error` inside `tool_output`.

tests/data/sdk-session.jsonl is one session exactly as that SDK sends it (session_start,
llm calls, tool_call events, a tool_error with `tool_output: {"error": "HTTP 503", ...}`,
agent_call/agent_error decorator events with a decision_trace, session_end). Every view must
see its tools and the tool's error as it sees the spec's `name`/`input`/`output` spelling.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import orjson
import pytest

from obsctl.services.ingest import ingest_events, validate_event
from obsctl.services.metrics import compute_metric
from obsctl.services.sessions.explain import explain_session
from obsctl.services.sessions.fields import error_message, tool_parts
from obsctl.vocabulary import is_error_event, tool_field
from tests.store_support import open_db

DATA = Path(__file__).parent.parent.parent / "data"
SDK_SESSION = DATA / "sdk-session.jsonl"
ALIAS_CASES = DATA / "tool-alias-cases.jsonl"
PRE_M006_DUMP = DATA / "pre-m006-tool-aliases.sql"
SID = "sdk-weather-001"


def load(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


@pytest.fixture
def sdk_db(db, client):
    """The SDK session posted to `POST /events` as the SDK does."""
    response = client.post("/events", json={"events": load(SDK_SESSION)})
    assert response.status_code == 200, response.get_json()
    assert response.get_json() == {"status": "ok", "processed": 10, "duplicates": 0}
    return db


def test_explain_lists_the_sdk_tools_and_the_tool_error(sdk_db, client, cli):
    text = client.get(f"/sessions/{SID}/explain").get_json()["explanation"]
    assert "- **Tools:** `weather_api` (2 calls, 30,252 ms), `calculator` (1 call, 2 ms), " \
           "`geocode` (1 call, 118 ms)\n" in text
    assert ("5. **+1.300s** · `tool_error` · tool `weather_api` · 30,012 ms · **❌ ERROR**\n"
            "   - Tool input: {\"lat\":38.72,\"lon\":-9.14}\n"
            "   - Tool output: {\"error\":\"HTTP 503\",\"error_type\":\"RuntimeError\"}\n"
            "   - **Error:** HTTP 503\n") in text
    assert "   - Tool output: {\"result\":70.7}\n" in text
    # The decorator events: their reasoning, and agent_error's message from output_data.
    assert "   - Reasoning: Geocode the city, fetch the forecast, convert the unit\n" in text
    assert "   - **Error:** reply exceeds 60 characters for channel sms\n" in text
    assert "- **Errors:** 2 (events #5, #9)\n" in text
    assert "event type tool_error" not in text
    assert json.loads(cli("explain", SID, "--json").stdout)["explanation"] == text


def test_export_carries_the_sdk_tool_fields(sdk_db, cli):
    result = cli("export", SID, "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = {r["event_id"]: r for r in csv.DictReader(io.StringIO(result.stdout))}
    failed = rows[f"{SID}-04"]
    assert (failed["tool_name"], failed["tool_input"], failed["tool_output"]) == (
        "weather_api", '{"lat":38.72,"lon":-9.14}', '{"error":"HTTP 503","error_type":"RuntimeError"}')
    calc = rows[f"{SID}-06"]
    assert (calc["tool_name"], calc["tool_input"], calc["tool_output"]) == (
        "calculator", '{"expression":"21.5 * 9 / 5 + 32"}', '{"result":70.7}')
    assert rows[f"{SID}-08"]["reasoning"] == "Format the answer for the user's channel"
    # JSON keeps tool_call as it was sent, so the SDK's keys are all there.
    exported = json.loads(cli("export", SID).stdout)
    by_id = {e["event_id"]: e for e in exported["events"]}
    assert by_id[f"{SID}-04"]["tool_call"] == load(SDK_SESSION)[4]["tool_call"]


def test_triage_counts_the_sdk_tools_and_groups_the_tool_error(sdk_db, client, cli):
    report = client.get(f"/triage/{SID}").get_json()
    tools = {t["tool_name"]: t for t in report["tools"]}
    assert sorted(tools) == ["calculator", "geocode", "weather_api"]
    assert (tools["weather_api"]["calls"], tools["weather_api"]["failures"]) == (2, 1)
    assert tools["weather_api"]["failure_rate_pct"] == 50.0
    assert (tools["geocode"]["calls"], tools["geocode"]["failures"]) == (1, 0)
    groups = {g["event_type"]: g for g in report["error_groups"]}
    assert groups["tool_error"]["tool_name"] == "weather_api"
    assert groups["tool_error"]["example"] == "HTTP 503"
    assert groups["tool_error"]["kind"] == "server"
    assert groups["agent_error"]["example"] == "reply exceeds 60 characters for channel sms"
    assert json.loads(cli("triage", SID, "--json").stdout)["tools"] == report["tools"]


def test_postmortem_tool_table_and_timeline_show_the_sdk_tools(sdk_db, client, cli):
    report = client.post(f"/postmortem/{SID}").get_json()
    tools = {t["tool_name"]: t for t in report["tool_performance"]}
    assert sorted(tools) == ["calculator", "geocode", "weather_api"]
    assert (tools["weather_api"]["calls"], tools["weather_api"]["failures"]) == (2, 1)
    failed = next(e for e in report["timeline"] if e["event_id"] == f"{SID}-04")
    assert failed["is_error"] and failed["tool_name"] == "weather_api"
    assert "HTTP 503" in failed["description"]
    markdown = cli("postmortem", SID, "--format", "md").stdout
    assert "| weather_api | 2 | 1 |" in markdown


def test_metrics_count_the_sdk_tool_failure(sdk_db):
    window = {"since": "2026-01-15T09:00:00.000Z", "until": "2026-01-15T10:00:00.000Z"}
    # Tool events: geocode, weather_api (failed), weather_api, calculator.
    assert compute_metric(sdk_db, "tool_error_rate", **window) == 25.0
    # Errors among the 8 non-lifecycle events: the tool_error and the agent_error.
    assert compute_metric(sdk_db, "error_rate", **window) == 25.0
    # A tool_call event whose failure is only inside tool_output counts too (1 of 5).
    ingest_events(sdk_db, load(ALIAS_CASES))
    later = {"since": "2026-01-15T10:00:00.000Z", "until": "2026-01-15T11:00:00.000Z"}
    assert compute_metric(sdk_db, "tool_error_rate", **later) == 20.0


def test_triage_loops_compare_the_aliased_tool_input(db, client):
    def call(i, query):
        return {"event_id": f"loop-{i}", "session_id": "loop", "event_type": "tool_call",
                "timestamp": f"2026-01-15T11:00:0{i}Z",
                "tool_call": {"tool_call_id": f"c{i}", "tool_name": "search",
                              "tool_input": {"q": query}, "tool_output": {"hits": 0}}}

    ingest_events(db, [call(i, f"query {i}") for i in range(5)])
    assert client.get("/triage/loop").get_json()["loops"] == []
    ingest_events(db, [{**call(i, "same"), "event_id": f"again-{i}", "session_id": "again"}
                       for i in range(5)])
    (loop,) = client.get("/triage/again").get_json()["loops"]
    assert (loop["tool_name"], loop["count"], loop["input"]) == ("search", 5, '{"q":"same"}')


def test_compare_and_session_show_name_the_sdk_tools(sdk_db, client, cli):
    body = client.post("/sessions/compare", json={"session_a": SID, "session_b": SID}).get_json()
    assert body["shared"]["tools"] == ["calculator", "geocode", "weather_api"]
    assert body["session_a"]["tools"]["weather_api"] == {"calls": 2, "total_duration": 30252.0}
    assert body["session_a"]["error_count"] == 2
    shown = cli("sessions", "show", SID).stdout
    assert "weather_api" in shown and "calculator" in shown


@pytest.mark.parametrize("tool_call,expected", [
    ({"tool_name": "t", "tool_output": {"error": "HTTP 503", "error_type": "RuntimeError"}}, True),
    ({"tool_name": "t", "tool_output": {"error": ""}}, False),
    ({"tool_name": "t", "tool_output": {"error": None, "result": 1}}, False),
    ({"tool_name": "t", "tool_output": "error"}, False),
    ({"tool_name": "t", "tool_output": {"result": 1}}, False),
    ({"name": "t", "output": {"ok": True}, "tool_output": {"error": "x"}}, True),
])
def test_error_inside_tool_output_is_an_error(tool_call, expected):
    assert is_error_event("tool_call", None, tool_call) is expected


def test_spec_keys_win_over_the_aliases():
    call = {"name": "search", "tool_name": "other", "input": {"q": 1}, "tool_input": {"q": 2},
            "output": {"hits": 3}, "tool_output": {"hits": 0}}
    assert tool_parts(call) == ("search", '{"q":1}', '{"hits":3}')
    assert tool_parts({"name": None, "tool_name": "alias", "tool_input": "text"}) == ("alias", "text", None)
    assert error_message(None, {"tool_name": "t", "tool_output": {"error": "HTTP 503"}}) == "HTTP 503"
    assert error_message({"error": "first"}, {"tool_output": {"error": "second"}}) == "first"


def _stored(db) -> dict:
    return {r[0]: r[1:] for r in db.conn.execute(
        "SELECT event_id, tool_name, is_error FROM events ORDER BY event_id")}


def test_ingest_stores_tool_name_and_is_error_from_either_spelling(db):
    ingest_events(db, load(ALIAS_CASES))
    assert _stored(db) == {
        "alias-cases-001-01": ("fetch_url", 1),   # tool_call typed, error inside tool_output
        "alias-cases-001-02": ("fetch_url", 0),   # empty error
        "alias-cases-001-03": ("search", 0),      # name wins over tool_name
        "alias-cases-001-04": ("search", 0),      # the spec's spelling
        "alias-cases-001-05": ("42", 0),          # a non-string name is stored as text
    }
    assert db.conn.execute("SELECT error_count FROM sessions").fetchone() == (1,)


def test_validated_rows_use_the_vocabulary_definitions():
    # Ingest validation is one function; the is_error and tool_name it stores are the
    # vocabulary's, for every spelling in the samples.
    now = "2026-01-15T12:00:00.000Z"
    for ev in load(SDK_SESSION) + load(ALIAS_CASES):
        valid = validate_event(ev, 0, errors := [], now)
        assert not errors
        row = valid.row
        expected_error = is_error_event(ev.get("event_type") or "generic", ev.get("output_data"),
                                        ev.get("tool_call"))
        assert row.is_error == (1 if expected_error else 0), ev["event_id"]
        name = tool_field(ev.get("tool_call"), "name")
        assert row.tool_name == (name if name is None or isinstance(name, str) else str(name)), ev["event_id"]


def _old_database(path: Path):
    """A database as the code before m006 wrote it, then opened (and migrated) by today's."""
    conn = sqlite3.connect(path)
    conn.executescript(PRE_M006_DUMP.read_text())
    before = conn.execute("SELECT COUNT(*) FROM events WHERE tool_name IS NULL AND "
                          "tool_call IS NOT NULL").fetchone()[0]
    conn.close()
    assert before == 7  # the SDK's four tool events and three alias cases had no tool_name
    return open_db(path)


def test_migration_backfills_rows_stored_before_the_aliases(tmp_path):
    old = _old_database(tmp_path / "old.db")
    fresh = open_db(tmp_path / "fresh.db")
    for path in (SDK_SESSION, ALIAS_CASES):
        ingest_events(fresh, load(path))
    assert _stored(old) == _stored(fresh)
    assert _stored(old)["alias-cases-001-01"] == ("fetch_url", 1)
    # All but last_seen_at: when events reached this server, which the migration cannot know;
    # and the costs, which events stored before m021 get from `obsctl db reprice`.
    columns = [c[0] for c in old.conn.execute("SELECT * FROM sessions LIMIT 0").description
               if c[0] not in ("last_seen_at", "cost_usd", "unpriced_calls")]
    session_sql = f"SELECT {', '.join(columns)} FROM sessions ORDER BY session_id"
    assert old.conn.execute(session_sql).fetchall() == fresh.conn.execute(session_sql).fetchall()
    stats_sql = ("SELECT event_type, hour, model, event_count, tokens_in, tokens_out, duration_sum, "
                 "duration_count FROM event_stats ORDER BY 1, 2, 3")
    assert old.conn.execute(stats_sql).fetchall() == fresh.conn.execute(stats_sql).fetchall()
    assert old.conn.execute("SELECT error_count FROM sessions WHERE session_id = 'alias-cases-001'"
                            ).fetchone() == (1,)


def test_migrated_database_shows_the_sdk_tools(tmp_path):
    db = _old_database(tmp_path / "old.db")
    text = explain_session(db, SID)["explanation"]
    assert "- **Tools:** `weather_api` (2 calls" in text
    assert "   - **Error:** HTTP 503\n" in text
