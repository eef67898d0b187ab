"""Export a session as JSON (spec 2.3) and CSV: exact content, streaming, API and CLI."""

import csv
import io
import json

import pytest

from obsctl.services.ingest import ingest_events
from obsctl.services.sessions.export import CSV_COLUMNS, csv_cell, export_session
from tests.conftest import event


def seed(db, session_id="s1"):
    s = session_id
    ingest_events(db, [
        event(s, "session_start", event_id="e1", agent_name="bot", timestamp="2026-03-01T10:00:00Z",
              metadata={"team": "support"}),
        event(s, event_id="e2", model="gpt-4o", tokens_in=100, tokens_out=40, duration_ms=250,
              timestamp="2026-03-01T10:00:01Z",
              input_data={"prompt": 'say "hi", then\nstop'}, output_data={"text": "hi"}),
        event(s, "tool_call", event_id="e3", duration_ms=12.5, timestamp="2026-03-01T10:00:02Z",
              tool_call={"name": "calc", "input": {"expr": "=1+1"}, "output": "-2 apples"}),
        event(s, "decision", event_id="e4", timestamp="2026-03-01T10:00:03Z",
              decision_trace={"reasoning": "=HYPERLINK(\"x\")", "score": 1}),
        event(s, event_id="e5", model="gpt-4o-mini", tokens_in=10, tokens_out=5,
              timestamp="2026-03-01T10:00:04Z"),
        event(s, "session_end", event_id="e6", status="completed", timestamp="2026-03-01T10:00:05Z"),
    ])


def body_of(stream) -> bytes:
    return b"".join(stream.chunks)


def _event(event_id, event_type, timestamp, **fields):
    base = {"event_id": event_id, "event_type": event_type, "timestamp": timestamp, "model": None,
            "tokens_in": None, "tokens_out": None, "duration_ms": None, "input_data": None,
            "output_data": None, "tool_call": None, "decision_trace": None, "tokens_cache_read": None,
            "tokens_cache_write": None, "tokens_reasoning": None, "messages": None}
    base.update(fields)
    return base


def test_json_export_is_exact(db):
    seed(db)
    data = json.loads(body_of(export_session(db, "s1", "json")))
    assert list(data) == ["exported_at", "session", "events", "summary"]
    assert data["exported_at"].endswith("Z")
    assert data["session"] == {
        "session_id": "s1", "agent_name": "bot", "status": "completed",
        "started_at": "2026-03-01T10:00:00.000Z", "ended_at": "2026-03-01T10:00:05.000Z",
        "total_tokens_in": 110, "total_tokens_out": 45, "metadata": {"team": "support"},
    }
    assert data["events"] == [
        _event("e1", "session_start", "2026-03-01T10:00:00.000Z"),
        _event("e2", "llm_call", "2026-03-01T10:00:01.000Z", model="gpt-4o", tokens_in=100,
               tokens_out=40, duration_ms=250, input_data={"prompt": 'say "hi", then\nstop'},
               output_data={"text": "hi"}),
        _event("e3", "tool_call", "2026-03-01T10:00:02.000Z", duration_ms=12.5,
               tool_call={"name": "calc", "input": {"expr": "=1+1"}, "output": "-2 apples"}),
        _event("e4", "decision", "2026-03-01T10:00:03.000Z",
               decision_trace={"reasoning": "=HYPERLINK(\"x\")", "score": 1}),
        _event("e5", "llm_call", "2026-03-01T10:00:04.000Z", model="gpt-4o-mini", tokens_in=10,
               tokens_out=5),
        _event("e6", "session_end", "2026-03-01T10:00:05.000Z"),
    ]
    assert data["summary"] == {
        "total_events": 6,
        "total_tokens": 155,
        "models_used": ["gpt-4o", "gpt-4o-mini"],
        "event_types": ["decision", "llm_call", "session_end", "session_start", "tool_call"],
        "total_duration_ms": 262.5,
    }


def test_csv_export_parses_back_with_13_columns(db):
    seed(db)
    text = body_of(export_session(db, "s1", "csv")).decode()
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == list(CSV_COLUMNS) == [
        "event_id", "event_type", "timestamp", "model", "tokens_in", "tokens_out", "duration_ms",
        "input_data", "output_data", "tool_name", "tool_input", "tool_output", "reasoning"]
    assert rows[1] == ["e1", "session_start", "2026-03-01T10:00:00.000Z"] + [""] * 10
    assert rows[2] == ["e2", "llm_call", "2026-03-01T10:00:01.000Z", "gpt-4o", "100", "40", "250",
                       '{"prompt":"say \\"hi\\", then\\nstop"}', '{"text":"hi"}', "", "", "", ""]
    # Formula guard: a tool input that is JSON starts with "{" and is left alone; text
    # starting with "-" or "=" gets a leading quote.
    assert rows[3] == ["e3", "tool_call", "2026-03-01T10:00:02.000Z", "", "", "", "12.5", "", "",
                       "calc", '{"expr":"=1+1"}', "'-2 apples", ""]
    assert rows[4][12] == "'=HYPERLINK(\"x\")"
    assert rows[5][:7] == ["e5", "llm_call", "2026-03-01T10:00:04.000Z", "gpt-4o-mini", "10", "5", ""]
    assert len(rows) == 7
    assert all(len(r) == 13 for r in rows)


def test_csv_uses_rfc4180_quoting_and_crlf(db):
    ingest_events(db, [event("q", "decision", event_id="q1", timestamp="2026-03-01T10:00:00Z",
                             decision_trace={"reasoning": 'one, "two"\nthree'})])
    text = body_of(export_session(db, "q", "csv")).decode()
    assert text.endswith('"one, ""two""\nthree"\r\n')
    assert text.count("\r\n") == 2
    assert list(csv.reader(io.StringIO(text, newline="")))[1][12] == 'one, "two"\nthree'


@pytest.mark.parametrize("value, cell", [
    ("=SUM(A1)", "'=SUM(A1)"), ("+cmd", "'+cmd"), ("-x", "'-x"), ("@here", "'@here"),
    ("@SUM(A1:A9)", "'@SUM(A1:A9)"), ("a@b", "a@b"),
    ("-5", "-5"), ("+1.5e3", "+1.5e3"), ("-.5", "-.5"), ("-inf", "'-inf"), ("plain", "plain"),
    (None, ""), (42, "42"), (-3, "-3"), (2.5, "2.5"),
])
def test_formula_injection_guard(value, cell):
    assert csv_cell(value) == cell


def test_exported_csv_cells_starting_with_a_formula_character_are_quoted(db):
    ingest_events(db, [event("f", event_type="tool_call", tool_call={"name": "@SUM(A1)", "input": "=1+1"},
                             output_data={"text": "+cmd"}, input_data={"text": "-x"})])
    text = b"".join(export_session(db, "f", "csv").chunks).decode()
    row = list(csv.reader(io.StringIO(text, newline="")))[1]
    assert row[CSV_COLUMNS.index("tool_name")] == "'@SUM(A1)"
    assert row[CSV_COLUMNS.index("tool_input")] == "'=1+1"


def test_large_session_streams_in_chunks(db):
    ingest_events(db, [event("big", event_id=f"b{i:04d}", tokens_in=1, tokens_out=2, model="m",
                             timestamp=f"2026-03-01T10:{i // 60:02d}:{i % 60:02d}Z")
                       for i in range(1000)])
    chunks = list(export_session(db, "big", "json").chunks)
    assert len(chunks) > 5  # header, 5 chunks of 200 events, summary
    data = json.loads(b"".join(chunks))
    assert [e["event_id"] for e in data["events"]] == [f"b{i:04d}" for i in range(1000)]
    assert data["summary"]["total_tokens"] == 3000
    csv_chunks = list(export_session(db, "big", "csv").chunks)
    assert len(csv_chunks) > 5
    assert len(list(csv.reader(io.StringIO(b"".join(csv_chunks).decode(), newline="")))) == 1001


def test_empty_session_exports_valid_documents(db):
    # A session row without events (not reachable through ingest, but must not break JSON).
    db.conn.execute("INSERT INTO sessions (session_id, started_at) VALUES ('empty', '2026-03-01T10:00:00.000Z')")
    data = json.loads(body_of(export_session(db, "empty", "json")))
    assert data["events"] == []
    assert data["summary"]["total_events"] == 0
    assert body_of(export_session(db, "empty", "csv")).decode() == ",".join(CSV_COLUMNS) + "\r\n"


def test_api_json_export_of_a_small_session_has_a_length(db, client):
    seed(db)
    response = client.get("/sessions/s1/export")
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    assert int(response.headers["Content-Length"]) == len(response.data)
    assert "Content-Disposition" not in response.headers
    assert response.get_json()["summary"]["total_events"] == 6


def test_api_export_of_a_large_session_is_streamed(db, client):
    ingest_events(db, [event("big", event_id=f"b{i:04d}", timestamp=f"2026-03-01T10:{i // 60:02d}:{i % 60:02d}Z")
                       for i in range(501)])
    for fmt in ("json", "csv"):
        response = client.get(f"/sessions/big/export?format={fmt}")
        assert response.status_code == 200
        # No length: the body is a generator, sent chunked.
        assert "Content-Length" not in response.headers
    assert len(response.data.decode().splitlines()) == 502
    assert len(client.get("/sessions/big/export").get_json()["events"]) == 501


def test_api_csv_export_is_an_attachment(db, client):
    seed(db)
    response = client.get("/sessions/s1/export?format=csv")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert response.headers["Content-Disposition"] == 'attachment; filename="session-s1.csv"'
    assert response.data == body_of(export_session(db, "s1", "csv"))


def test_api_csv_filename_is_sanitised(db, client):
    seed(db, 'a/b"c d')
    response = client.get('/sessions/a/b"c d/export?format=csv')
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == 'attachment; filename="session-a_b_c_d.csv"'


def test_api_invalid_format_is_400(db, client):
    seed(db)
    response = client.get("/sessions/s1/export?format=xml")
    assert response.status_code == 400
    assert response.get_json() == {"error": "format must be json or csv; got 'xml'"}
    # The format is checked first, even for an unknown session.
    assert client.get("/sessions/nope/export?format=CSV").status_code == 400


def test_api_unknown_session_is_404(db, client):
    response = client.get("/sessions/nope/export?format=csv")
    assert response.status_code == 404
    assert response.get_json() == {"error": "session 'nope' not found"}


def without_time(body: bytes) -> dict:
    data = json.loads(body)
    data.pop("exported_at")
    return data


def test_cli_json_equals_api_body(db, cli, client):
    seed(db)
    result = cli("export", "s1")
    assert result.exit_code == 0
    assert without_time(result.stdout_bytes) == without_time(client.get("/sessions/s1/export").data)
    assert without_time(cli("export", "s1", "--json").stdout_bytes) == without_time(result.stdout_bytes)


def test_cli_csv_to_file_equals_api_body(db, cli, client, tmp_path):
    seed(db)
    target = tmp_path / "out.csv"
    result = cli("export", "s1", "--format", "csv", "-o", str(target))
    assert result.exit_code == 0
    assert result.stdout == ""
    assert "exported session s1 as csv to" in result.stderr
    assert target.read_bytes() == client.get("/sessions/s1/export?format=csv").data
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.csv")] == []


def test_cli_errors(db, cli, tmp_path):
    seed(db)
    missing = cli("export", "nope")
    assert (missing.exit_code, missing.stderr) == (1, "Error: session 'nope' not found\n")
    bad = cli("export", "s1", "--format", "xml")
    assert bad.exit_code == 2
    assert bad.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for '--format' / '-f': must be json or csv (one session), or jsonl, csv or "
            "parquet (many); got 'xml'")
    unwritable = cli("export", "s1", "-o", str(tmp_path / "no-such-dir" / "x.json"))
    assert unwritable.exit_code == 1
    assert unwritable.stderr.startswith("Error: cannot write ")
    assert cli("export", "s1", "--json", "--format", "csv").exit_code == 2


def test_any_text_round_trips_through_csv(tmp_path):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from tests.store_support import open_db

    db = open_db(tmp_path / "prop.db")
    counter = iter(range(10**9))

    @settings(max_examples=60, deadline=None)
    @given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")))
    def check(text):
        sid = f"p{next(counter)}"
        ingest_events(db, [event(sid, "decision", decision_trace={"reasoning": text},
                                 timestamp="2026-03-01T10:00:00Z")])
        body = body_of(export_session(db, sid, "csv")).decode()
        rows = list(csv.reader(io.StringIO(body, newline="")))
        assert len(rows) == 2
        assert rows[1][12] == csv_cell(text)

    check()
    db.close()


def test_empty_format_is_400(client):
    from obsctl.services.ingest import ingest_events
    from obsctl.web.http import get_store

    with client.application.app_context():
        ingest_events(get_store(), [{"session_id": "s", "event_type": "llm_call"}])
    r = client.get("/sessions/s/export?format=")
    assert r.status_code == 400 and "format must be json or csv" in r.get_json()["error"]
