"""Bulk export (`obsctl export --all`/filters, `GET /export`): exact lines, the re-ingest round
trip, filters, CSV and Parquet, the HTTP answer and the CLI, on both stores."""

from __future__ import annotations

import csv
import io
import json
import sys

import pytest

from obsctl.errors import InvalidInput
from obsctl.services.ingest import ingest_events
from obsctl.services.sessions.bulk_export import (
    LINE_COLUMNS,
    PARQUET_MISSING,
    export_events,
    select_events,
)
from tests import backends
from tests.conftest import event
from tests.store_support import open_any


def seed(db):
    """Two agents, three sessions; events stored out of timestamp order."""
    ingest_events(db, [
        event("s1", "session_start", event_id="a1", agent_name="bot", timestamp="2026-03-01T10:00:00Z",
              metadata={"team": "support"}),
        event("s1", event_id="a2", model="gpt-4o", tokens_in=100, tokens_out=40, duration_ms=250,
              timestamp="2026-03-01T10:00:01Z", input_data={"prompt": 'say "hi"\nnow'}),
        event("s1", "tool_call", event_id="a3", duration_ms=12.5, timestamp="2026-03-01T10:00:02Z",
              tool_call={"name": "calc", "input": {"expr": "=1+1"}}, parent_id="a2"),
        event("s1", "session_end", event_id="a4", status="error", total_tokens_in=500,
              timestamp="2026-03-01T10:00:03Z"),
    ])
    ingest_events(db, [
        event("s2", "session_start", event_id="b1", agent_name="crawler", timestamp="2026-03-02T09:00:00Z"),
        event("s2", "decision", event_id="b2", timestamp="2026-03-02T09:00:05Z",
              decision_trace={"reasoning": "=cmd"}),
        # Arrives after b2 with an earlier timestamp: exported in time order.
        event("s3", event_id="c1", agent_name="bot", model="m", tokens_in=1, timestamp="2026-03-01T12:00:00Z"),
    ])


def lines(db, selection=None, fmt="jsonl") -> bytes:
    return b"".join(export_events(db, selection or select_events(), fmt).chunks)


def ids(data: bytes) -> list[str]:
    return [json.loads(line)["event_id"] for line in data.splitlines()]


def test_jsonl_lines_are_events_as_ingest_takes_them(db):
    seed(db)
    rows = [json.loads(line) for line in lines(db).splitlines()]
    assert [r["event_id"] for r in rows] == ["a1", "a2", "a3", "a4", "c1", "b1", "b2"]
    assert all(list(r) == list(LINE_COLUMNS) for r in rows)
    blank = dict.fromkeys(LINE_COLUMNS)
    assert rows[0] == {**blank, "event_id": "a1", "session_id": "s1", "event_type": "session_start",
                       "timestamp": "2026-03-01T10:00:00.000Z", "agent_name": "bot",
                       "metadata": {"team": "support"}}
    assert rows[1] == {**blank, "event_id": "a2", "session_id": "s1", "event_type": "llm_call",
                       "timestamp": "2026-03-01T10:00:01.000Z", "model": "gpt-4o", "tokens_in": 100,
                       "tokens_out": 40, "duration_ms": 250, "input_data": {"prompt": 'say "hi"\nnow'}}
    assert rows[2]["tool_call"] == {"name": "calc", "input": {"expr": "=1+1"}} and rows[2]["parent_id"] == "a2"
    assert rows[2]["duration_ms"] == 12.5
    # The session_end carries the session's status and final token counts.
    assert rows[3] == {**blank, "event_id": "a4", "session_id": "s1", "event_type": "session_end",
                       "timestamp": "2026-03-01T10:00:03.000Z", "status": "error",
                       "total_tokens_in": 500, "total_tokens_out": 40}


def test_jsonl_reingests_to_the_same_data(db, backend, tmp_path):
    """Export, ingest into a fresh database of the same backend, export again: identical."""
    seed(db)
    first = lines(db)
    if backend == "sqlite":
        fresh_url, schema = str(tmp_path / "fresh.db"), None
    else:
        schema, fresh_url = backends.new_schema()
    fresh = open_any(fresh_url)
    try:
        ingest_events(fresh, [json.loads(line) for line in first.splitlines()])
        assert lines(fresh) == first
        for session_id in ("s1", "s2", "s3"):
            assert fresh.sessions.get_session(session_id) == db.sessions.get_session(session_id)
    finally:
        fresh.close()
        if schema:
            backends.drop_schema(schema)


@pytest.mark.parametrize(("filters", "expected"), [
    ({}, ["a1", "a2", "a3", "a4", "c1", "b1", "b2"]),
    ({"agents": ["bot"]}, ["a1", "a2", "a3", "a4", "c1"]),
    ({"agents": ["crawler", "bot"]}, ["a1", "a2", "a3", "a4", "c1", "b1", "b2"]),
    ({"statuses": ["error"]}, ["a1", "a2", "a3", "a4"]),
    ({"statuses": ["active"]}, ["c1", "b1", "b2"]),
    ({"session_ids": ["s2", "s3"]}, ["c1", "b1", "b2"]),
    ({"event_types": ["llm_call", "decision"]}, ["a2", "c1", "b2"]),
    ({"since": "2026-03-01T10:00:02Z", "until": "2026-03-02T09:00:05Z"}, ["a3", "a4", "c1", "b1"]),
    ({"since": "1h", "until": "2026-03-01T12:00:00.000Z"}, []),
    ({"since": "1h", "until": "2026-03-01T12:00:00.001Z"}, ["c1"]),
    ({"agents": ["bot"], "event_types": ["llm_call"], "since": "2026-03-01T11:00:00Z"}, ["c1"]),
    ({"agents": ["nobody"]}, []),
])
def test_filters_select_events(db, filters, expected):
    seed(db)
    assert ids(lines(db, select_events(**filters))) == expected


@pytest.mark.parametrize(("filters", "message"), [
    ({"statuses": ["done"]}, "status must be one of active, completed, error; got 'done'"),
    ({"since": "yesterday"}, "since must be an ISO 8601 time or an age like 24h, 30m, 7d; got 'yesterday'"),
    ({"until": "2026-13-01"}, "until must be an ISO 8601 time; got '2026-13-01'"),
    ({"since": "2026-03-02T00:00:00Z", "until": "2026-03-01T00:00:00Z"},
     "since (2026-03-02T00:00:00.000Z) must be before until (2026-03-01T00:00:00.000Z)"),
    ({"agents": [""]}, "agent must not be empty"),
    ({"session_ids": [f"s{i}" for i in range(201)]}, "at most 200 values of session are accepted; got 201"),
])
def test_bad_filters_are_refused(filters, message):
    with pytest.raises(InvalidInput) as raised:
        select_events(**filters)
    assert raised.value.message == message


def test_bad_format_is_refused_before_any_output(db):
    with pytest.raises(InvalidInput, match="format must be one of jsonl, csv, parquet; got 'json'"):
        export_events(db, select_events(), "json")


def test_csv_has_the_line_columns_and_guards_formulas(db):
    seed(db)
    rows = list(csv.reader(io.StringIO(lines(db, fmt="csv").decode(), newline="")))
    assert rows[0] == list(LINE_COLUMNS) and len(LINE_COLUMNS) == 21
    assert len(rows) == 8 and all(len(r) == 21 for r in rows)
    assert rows[2][:12] == ["a2", "s1", "llm_call", "2026-03-01T10:00:01.000Z", "gpt-4o", "", "100", "40", "", "",
                            "", "250"]
    assert rows[2][12] == '{"prompt":"say \\"hi\\"\\nnow"}'
    assert rows[4][18:] == ["error", "500", "40"]
    assert rows[7][LINE_COLUMNS.index("decision_trace")] == '{"reasoning":"=cmd"}'


def test_many_events_stream_in_chunks(db):
    ingest_events(db, [event("big", event_id=f"e{i:05d}", timestamp=f"2026-03-01T10:{i // 600:02d}:"
                             f"{i // 10 % 60:02d}.{i % 10}00Z") for i in range(2500)])
    chunks = export_events(db, select_events(), "jsonl").chunks
    first = next(chunks)
    assert first.count(b"\n") == 1000  # one batch at a time, not the whole export
    rest = b"".join(chunks)
    assert ids(first + rest) == [f"e{i:05d}" for i in range(2500)]


def test_parquet_reads_back_with_the_same_columns(db):
    import pyarrow.parquet as pq  # the parquet extra, which the test extra includes

    seed(db)
    table = pq.read_table(io.BytesIO(lines(db, fmt="parquet")))
    assert table.column_names == list(LINE_COLUMNS)
    assert str(table.schema.field("timestamp").type) == "timestamp[ms, tz=UTC]"
    rows = table.to_pylist()
    assert [r["event_id"] for r in rows] == ["a1", "a2", "a3", "a4", "c1", "b1", "b2"]
    assert rows[1]["tokens_in"] == 100 and rows[1]["duration_ms"] == 250.0
    assert rows[1]["timestamp"].isoformat() == "2026-03-01T10:00:01+00:00"
    assert json.loads(rows[2]["tool_call"]) == {"name": "calc", "input": {"expr": "=1+1"}}
    assert (rows[3]["status"], rows[3]["total_tokens_in"], rows[3]["total_tokens_out"]) == ("error", 500, 40)
    assert rows[4]["status"] is None


@pytest.fixture
def without_pyarrow(monkeypatch):
    """As on a machine without pyarrow: importing it fails."""
    for name in list(sys.modules):
        if name == "pyarrow" or name.startswith("pyarrow."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyarrow", None)


def test_parquet_without_pyarrow_says_how_to_get_it(db, without_pyarrow):
    with pytest.raises(InvalidInput) as raised:
        export_events(db, select_events(), "parquet")
    assert raised.value.message == PARQUET_MISSING
    assert "pip install 'obsctl[parquet]'" in PARQUET_MISSING


def test_parquet_without_pyarrow_cli_and_http(db, cli, client, without_pyarrow, tmp_path):
    result = cli("export", "--all", "--format", "parquet", "-o", str(tmp_path / "x.parquet"))
    assert result.exit_code == 1 and result.stderr == f"Error: {PARQUET_MISSING}\n"
    assert not (tmp_path / "x.parquet").exists()
    answer = client.get("/export?format=parquet")
    assert answer.status_code == 400 and answer.json == {"error": PARQUET_MISSING}


# --- HTTP ---------------------------------------------------------------------------------------

def test_http_export_is_an_attachment_with_the_service_body(db, client):
    seed(db)
    answer = client.get("/export?agent=bot&agent=crawler&type=llm_call&type=session_end")
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == "application/x-ndjson"
    assert answer.headers["Content-Disposition"] == 'attachment; filename="obsctl-export.jsonl"'
    assert answer.data == lines(db, select_events(agents=["bot", "crawler"],
                                                  event_types=["llm_call", "session_end"]))
    assert ids(answer.data) == ["a2", "a4", "c1"]
    # event_type is the filter's name; type, its older name, still selects the same events.
    assert client.get("/export?agent=bot&agent=crawler&event_type=llm_call&event_type=session_end").data == answer.data
    answer = client.get("/export?format=csv&status=active&since=2026-03-02T00:00:00Z")
    assert answer.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert answer.headers["Content-Disposition"] == 'attachment; filename="obsctl-export.csv"'
    assert answer.data == lines(db, select_events(statuses=["active"], since="2026-03-02T00:00:00Z"), "csv")


@pytest.mark.parametrize(("query", "message"), [
    ("format=xml", "format must be one of jsonl, csv, parquet; got 'xml'"),
    ("status=done", "status must be one of active, completed, error; got 'done'"),
    ("since=soon", "since must be an ISO 8601 time or an age like 24h, 30m, 7d; got 'soon'"),
])
def test_http_export_refuses_bad_queries(client, query, message):
    answer = client.get(f"/export?{query}")
    assert answer.status_code == 400 and answer.json == {"error": message}


# --- CLI ----------------------------------------------------------------------------------------

def test_cli_writes_the_service_export_to_a_file(db, cli, tmp_path):
    seed(db)
    out = tmp_path / "all.jsonl"
    result = cli("export", "--all", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == lines(db)
    assert result.stderr == f"exported events as jsonl to {out} ({out.stat().st_size:,} bytes)\n"
    result = cli("export", "--agent", "bot", "--status", "error", "--status", "active", "--type", "llm_call")
    assert result.stdout_bytes == lines(db, select_events(agents=["bot"], statuses=["error", "active"],
                                                          event_types=["llm_call"]))
    assert ids(result.stdout_bytes) == ["a2", "c1"]
    again = cli("export", "--agent", "bot", "--status", "error", "--status", "active", "--event-type", "llm_call")
    assert again.stdout_bytes == result.stdout_bytes


def test_cli_session_argument_keeps_its_export_and_selects_with_many_formats(db, cli):
    seed(db)
    document = json.loads(cli("export", "s1").stdout)
    assert document["session"]["session_id"] == "s1" and len(document["events"]) == 4
    assert cli("export", "s2", "--format", "jsonl").stdout_bytes == lines(db, select_events(session_ids=["s2"]))
    assert cli("export", "s2", "--session", "s3").stdout_bytes == lines(db, select_events(session_ids=["s2", "s3"]))
    assert cli("export", "--all", "--json").stdout_bytes == lines(db)


@pytest.mark.parametrize(("args", "message"), [
    ((), "give a SESSION_ID, or --all, or filters"),
    (("--all", "--agent", "bot"), "--all exports every event; drop it"),
    (("--all", "--format", "json"), "json is one session's document; many sessions export as jsonl"),
    (("--all", "--format", "csv", "--json"), "--json cannot be combined with --format csv"),
    (("--status", "done"), "status must be one of active, completed, error; got 'done'"),
    (("--all", "--format", "xml"), "must be json or csv (one session), or jsonl, csv or parquet (many)"),
])
def test_cli_usage_errors(cli, args, message):
    result = cli("export", *args)
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())
