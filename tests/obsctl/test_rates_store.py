"""The session totals behind the error event rate (sessions.body_events, error_events) stay
equal to a count of the stored events: through ingest with lifecycle events, duplicates and
errors carried by session_start/session_end, through OTLP spans moving between sessions, and
when the migration fills them in on an existing database."""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from obsctl.services.ingest import ingest_events
from obsctl.services.otlp import ingest_otlp
from tests.otlp_support import MS, T0, TRACE, request, span
from tests.store_support import open_db

_COUNTED = """
SELECT s.session_id, s.body_events, s.error_events,
       (SELECT COUNT(*) FROM events e WHERE e.session_id = s.session_id
          AND e.event_type NOT IN ('session_start', 'session_end')),
       (SELECT COUNT(*) FROM events e WHERE e.session_id = s.session_id
          AND e.event_type NOT IN ('session_start', 'session_end') AND e.is_error = 1)
FROM sessions s
"""


def mismatches(db) -> list[tuple]:
    rows = db.conn.execute(_COUNTED).fetchall()
    assert rows, "no session to check"
    return [row for row in rows if row[1:3] != row[3:5]]


EVENT = st.fixed_dictionaries({
    "event_id": st.sampled_from([f"e{i}" for i in range(12)]),  # repeats are duplicates
    "session_id": st.sampled_from(["a", "b", "c"]),
    "event_type": st.sampled_from(["session_start", "session_end", "llm_call", "tool_call",
                                   "tool_error", "timeout", "decision"]),
    "agent_name": st.just("bot"),
    "output_data": st.sampled_from([None, {"text": "ok"}, {"error": "boom"}]),
    "timestamp": st.sampled_from(["2026-05-01T00:00:00Z", "2026-05-01T00:00:01Z"]),
})


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(batches=st.lists(st.lists(EVENT, min_size=1, max_size=8), min_size=1, max_size=4))
def test_body_event_totals_equal_the_stored_events(tmp_path_factory, batches):
    db = open_db(tmp_path_factory.mktemp("r") / "r.db")
    try:
        for batch in batches:
            ingest_events(db, batch)
        assert mismatches(db) == []
    finally:
        db.close()


def test_lifecycle_errors_count_in_error_count_only(db):
    ingest_events(db, [
        {"session_id": "s", "event_type": "session_start", "agent_name": "bot"},
        {"session_id": "s", "event_type": "llm_call"},
        {"session_id": "s", "event_type": "timeout"},
        {"session_id": "s", "event_type": "session_end", "output_data": {"error": "late"}},
    ])
    row = db.conn.execute("SELECT event_count, error_count, body_events, error_events FROM sessions").fetchone()
    assert row == (4, 2, 2, 1)


def test_spans_moving_into_their_session_move_their_totals(db):
    ingest_events(db, [{"session_id": "conv-9", "event_type": "session_start", "agent_name": "bot",
                        "timestamp": "2026-05-01T00:00:00Z"}])
    ingest_otlp(db, orjson.dumps(request(
        span("00000000000000c1", parent="00000000000000a1", start=T0 + 5 * MS),
        span("00000000000000c2", parent="00000000000000a1", start=T0 + 20 * MS,
             status={"code": 2, "message": "boom"}))), "json")
    before = db.conn.execute("SELECT body_events, error_events FROM sessions WHERE session_id = ?",
                             [TRACE]).fetchone()
    assert before == (2, 1)
    ingest_otlp(db, orjson.dumps(request(span("00000000000000a1", attrs={"gen_ai.conversation.id": "conv-9"}))),
                "json")
    assert db.conn.execute("SELECT body_events, error_events FROM sessions WHERE session_id = 'conv-9'"
                           ).fetchone() == (3, 1)
    assert mismatches(db) == []


def test_the_migration_fills_in_an_existing_database(db_path):
    db = open_db(db_path)
    ingest_events(db, [
        {"session_id": "s", "event_type": "session_start", "agent_name": "bot"},
        {"session_id": "s", "event_type": "tool_error"},
        {"session_id": "s", "event_type": "llm_call"},
        {"session_id": "s", "event_type": "session_end", "status": "error", "output_data": {"error": "x"}},
        {"session_id": "t", "event_type": "llm_call"},
    ])
    # Back to the schema before m007, as a database written by an older obsctl.
    db.execute("ALTER TABLE sessions DROP COLUMN body_events")
    db.execute("ALTER TABLE sessions DROP COLUMN error_events")
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm007_session_body_event_counts'")
    db.close()
    db = open_db(db_path)
    try:
        assert db.conn.execute("SELECT session_id, body_events, error_events FROM sessions "
                               "ORDER BY session_id").fetchall() == [("s", 2, 1), ("t", 1, 0)]
        assert mismatches(db) == []
    finally:
        db.close()


def test_percent_rounds_half_up_and_the_sql_rank_computes_the_same_hundredths():
    import sqlite3

    from obsctl.services.rates import hundredths, percent
    from obsctl.store.sql import SQLITE
    from obsctl.store.sql.triage import _rate

    assert [percent(1, 32), percent(1, 3), percent(2, 3), percent(5, 8), percent(0, 0)] == [
        3.13, 33.33, 66.67, 62.5, None]
    conn = sqlite3.connect(":memory:")
    pairs = [(e, b) for b in range(0, 120) for e in range(0, b + 1)]
    rows = conn.execute("WITH p(error_events, body_events) AS (VALUES " +
                        ",".join(f"({e},{b})" for e, b in pairs) + f") SELECT {_rate(SQLITE.greatest)} FROM p").fetchall()
    assert [r[0] for r in rows] == [hundredths(e, b) for e, b in pairs]
