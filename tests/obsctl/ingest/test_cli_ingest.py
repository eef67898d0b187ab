"""`obsctl ingest`: formats, rejected lines, --strict, stdin, summary, exit codes."""

import json
import subprocess
import sys

import pytest

from obsctl.services.ingest.source import CountingReader, Unreadable, read_events
from obsctl.services.sessions import get_session, list_sessions
from tests.store_support import open_any


def lines(*events) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def stored(db_url) -> int:
    db = open_any(db_url)
    try:
        return db.conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    finally:
        db.close()


def test_jsonl_file_is_ingested_with_summary(cli, tmp_path, db_url):
    path = tmp_path / "events.jsonl"
    path.write_text(lines({"session_id": "a", "event_type": "session_start", "agent_name": "bot"},
                          {"session_id": "a", "tokens_in": 4}, {"session_id": "b"}))
    result = cli("ingest", str(path))
    assert result.exit_code == 0, result.output
    assert "ingested 3 events into 2 sessions (3 new, 0 duplicates, 0 rejected)" in result.stderr
    assert result.stdout == ""
    assert stored(db_url) == 3


def test_broken_line_in_the_middle_is_reported_and_the_rest_stored(cli, tmp_path, db_url):
    path = tmp_path / "events.jsonl"
    path.write_text(lines({"session_id": "a"}) + '{"session_id": "b", oops\n'
                    + lines({"session_id": "c", "tokens_in": -2}, {"session_id": "d"}))
    result = cli("ingest", str(path))
    assert result.exit_code == 1
    assert f"{path}:2: rejected: malformed JSON" in result.stderr
    assert f"{path}:3: rejected: tokens_in must be a non-negative integer, got -2" in result.stderr
    assert "2 rejected" in result.stderr
    assert stored(db_url) == 2


def test_strict_stores_nothing_when_a_line_is_bad(cli, tmp_path, db_url):
    path = tmp_path / "events.jsonl"
    path.write_text(lines({"session_id": "a"}, {"session_id": "b"}) + "[not an event]\n")
    result = cli("ingest", "--strict", "--batch-size", "1", str(path))
    assert result.exit_code == 1
    assert "--strict: nothing was stored" in result.stderr
    assert stored(db_url) == 0


def test_strict_stores_everything_when_all_lines_are_good(cli, tmp_path, db_url):
    path = tmp_path / "events.jsonl"
    path.write_text(lines({"session_id": "a"}, {"session_id": "b"}))
    assert cli("ingest", "--strict", str(path)).exit_code == 0
    assert stored(db_url) == 2


def test_stdin_json_array_and_wrapper(cli, db_url):
    array = json.dumps([{"session_id": "a", "event_id": "1"}, {"session_id": "a", "event_id": "2"}], indent=2)
    assert cli("ingest", "-", input=array).exit_code == 0
    wrapper = json.dumps({"events": [{"session_id": "b", "event_id": "3"}]}, indent=2)
    assert cli("ingest", input=wrapper).exit_code == 0
    assert stored(db_url) == 3


def test_reingesting_counts_duplicates(cli, tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text(lines({"session_id": "a", "event_id": "x"}, {"session_id": "a", "event_id": "y"}))
    cli("ingest", str(path))
    result = cli("ingest", "--json", str(path))
    assert json.loads(result.stdout) == {"events": 2, "stored": 0, "duplicates": 2, "rejected": 0,
                                         "sessions": 1}


def test_empty_file_is_not_an_error(cli, tmp_path, db_url):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")
    result = cli("ingest", str(path))
    assert result.exit_code == 0
    assert "ingested 0 events" in result.stderr


def test_missing_file_is_a_clear_error(cli, tmp_path):
    result = cli("ingest", str(tmp_path / "nope.jsonl"))
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: file not found:")


def test_unknown_format_is_rejected(cli, tmp_path):
    result = cli("ingest", "--format", "xml", "-", input="")
    assert result.exit_code == 2
    assert ("Invalid value for '--format' / '-f': format must be one of auto, jsonl, json, otlp-json; "
            "got 'xml'") in result.stderr


def test_ingested_data_matches_session_views(cli, tmp_path, db_url):
    path = tmp_path / "e.jsonl"
    path.write_text(lines({"session_id": "s", "event_type": "session_start", "agent_name": "bot",
                           "timestamp": "2026-01-01T00:00:00Z"},
                          {"session_id": "s", "tokens_in": 7, "tokens_out": 3},
                          {"session_id": "s", "event_type": "session_end", "status": "error"}))
    cli("ingest", str(path))
    db = open_any(db_url)
    session = get_session(db, "s")
    assert (session["agent_name"], session["status"], session["total_tokens_in"]) == ("bot", "error", 7)
    assert list_sessions(db)["total"] == 1


@pytest.mark.parametrize("data,expected", [
    (b'{"a":1}\n\n{"b":2}\n', [(1, {"a": 1}), (3, {"b": 2})]),
    (b'[{"a":1},\n {"b":2}]', [(1, {"a": 1}), (2, {"b": 2})]),
    (b'{\n "events": [{"a":1}]\n}', [(1, {"a": 1})]),
    (b'{"events": [{"a":1}, {"b":2}]}\n', [(1, {"a": 1}), (2, {"b": 2})]),
    (b"", []),
])
def test_event_source_formats(data, expected):
    import io

    assert list(read_events(CountingReader(io.BytesIO(data)))) == expected


def test_event_source_reports_a_truncated_document():
    import io

    records = list(read_events(CountingReader(io.BytesIO(b'[{"a":1}, {"b"'))))
    assert records[0] == (1, {"a": 1})
    assert isinstance(records[1][1], Unreadable) and "after item 1" in records[1][1].message


def test_python_dash_m_and_version(tmp_path):
    result = subprocess.run([sys.executable, "-m", "obsctl", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("obsctl ")


def test_pipe_into_ingest_dash(tmp_path):
    db = tmp_path / "pipe.db"
    data = lines(*({"session_id": f"s{i % 3}", "event_id": str(i)} for i in range(2500)))
    result = subprocess.run([sys.executable, "-m", "obsctl", "--db", str(db), "ingest", "-"],
                            input=data, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "ingested 2500 events into 3 sessions" in result.stderr
    assert stored(db) == 2500
