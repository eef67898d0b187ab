"""The search index is written after ingest commits (services/search_index.py): nothing is
indexed by the ingest transaction, every search first indexes what is behind, each event is
indexed once whatever happens on the way, and a server's indexer keeps up on its own."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest
import requests

from obsctl.services.ingest import ingest_events
from obsctl.services.search import search_events
from obsctl.services.search_index import catch_up
from tests.obsctl.search.test_search import EVENTS, ids

pytestmark = pytest.mark.sqlite_only

_TEXT = sum(1 for e in EVENTS if any(k in e for k in ("input_data", "output_data", "tool_call", "decision_trace")))


def _indexed(conn) -> int:
    return conn.execute("SELECT COUNT(*) FROM events_fts_docsize").fetchone()[0]


def test_ingest_leaves_the_index_to_the_next_search(db):
    ingest_events(db, EVENTS)
    assert db.search.pending() == len(EVENTS) and _indexed(db.conn) == 0
    assert ids(search_events(db, "timeout")) == ["b3", "b2", "a2", "a1"]
    assert db.search.pending() == 0 and _indexed(db.conn) == _TEXT
    assert catch_up(db) == 0 and _indexed(db.conn) == _TEXT  # nothing twice
    db.conn.execute("INSERT INTO events_fts (events_fts, rank) VALUES ('integrity-check', 1)")


def test_an_event_filled_in_before_it_is_indexed_is_indexed_once(db):
    ingest_events(db, EVENTS)
    # OTLP fills an event's contents later; the update trigger indexes it ahead of the batch.
    db.conn.execute("UPDATE events SET output_data = ? WHERE event_id = 'c1'", [json.dumps({"text": "late words"})])
    db.conn.commit()
    assert catch_up(db) == len(EVENTS)
    assert db.conn.execute("SELECT COUNT(*) FROM event_search_keys k JOIN events e ON e.id = k.event_rowid "
                           "WHERE e.event_id = 'c1'").fetchone()[0] == 1
    assert ids(search_events(db, "late")) == ["c1"]
    db.conn.execute("INSERT INTO events_fts (events_fts, rank) VALUES ('integrity-check', 1)")


def test_a_batch_that_fails_leaves_no_trace(db):
    ingest_events(db, EVENTS)

    def index_then_fail(unit):
        assert unit.search.index_pending() == len(EVENTS)
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        db.run_write(index_then_fail)
    assert db.search.pending() == len(EVENTS) and _indexed(db.conn) == 0
    assert db.conn.execute("SELECT COUNT(*) FROM event_search_keys").fetchone()[0] == 0
    assert catch_up(db) == len(EVENTS) and _indexed(db.conn) == _TEXT


def test_a_read_only_search_catches_up_through_its_own_connection(db, db_path):
    from obsctl.store import open_store

    ingest_events(db, EVENTS)
    reader = open_store(str(db_path), mode="read")
    try:
        assert reader.readonly
        assert ids(search_events(reader, "refund")) == ["b1"]
    finally:
        reader.close()
    assert db.search.pending() == 0


def test_cli_ingest_ends_with_the_index_complete(cli, db, tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in EVENTS))
    assert cli("ingest", str(path)).exit_code == 0
    assert db.search.pending() == 0 and _indexed(db.conn) == _TEXT


@pytest.mark.e2e
def test_the_server_indexes_what_it_stores_without_a_search(live_server, db_path):
    server = live_server({"OBSCTL_RATE_LIMITS": "off"})
    response = requests.post(f"{server.url}/events", json={"events": EVENTS}, timeout=10)
    assert response.status_code in (200, 201), response.text
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        deadline = time.monotonic() + 10
        while _indexed(conn) < _TEXT and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _indexed(conn) == _TEXT
        assert conn.execute("SELECT indexed_through = (SELECT MAX(id) FROM events) FROM search_progress"
                            ).fetchone()[0] == 1
    finally:
        conn.close()


def test_events_that_reuse_the_ids_of_deleted_ones_are_indexed(db):
    from obsctl.services.sessions.housekeeping import delete_session

    ingest_events(db, EVENTS)
    catch_up(db)
    top = db.conn.execute("SELECT MAX(id) FROM events").fetchone()[0]
    delete_session(db, "s-c")  # the last events stored: SQLite hands their ids out again
    ingest_events(db, [{**e, "event_id": f"again-{e['event_id']}", "session_id": "s-d"} for e in EVENTS[-2:]]
                  + [{"session_id": "s-d", "event_id": "d9", "timestamp": EVENTS[-1]["timestamp"],
                      "event_type": "llm_call", "output_data": {"text": "reused rowid words"}}])
    assert db.conn.execute("SELECT MIN(id) FROM events WHERE session_id = 's-d'").fetchone()[0] <= top
    assert ids(search_events(db, "reused")) == ["d9"]
    assert db.search.pending() == 0
