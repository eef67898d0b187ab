"""Analytics (spec 2.5): exact values on hand-built sessions, freshness, rollup, API and CLI."""

import json
from datetime import UTC, datetime

import pytest

from obsctl.services.analytics import first_day, get_analytics
from obsctl.services.ingest import ingest_events
from obsctl.store.sqlite import event_stats
from obsctl.store.sqlite.ingest import EVENT_COLUMNS
from tests.conftest import event, use_prices
from tests.store_support import rollup_rows

AT = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)

# Calls that report no cache or reasoning tokens.
NO_PARTS = {"total_tokens_cache_read": 0, "total_tokens_cache_write": 0, "total_tokens_reasoning": 0}


def seed(db, tmp_path=None):
    if tmp_path is not None:
        use_prices(db, tmp_path)  # gpt-4o: $1 / $2 per million tokens in / out; claude unpriced
    ingest_events(db, [
        event("s1", "session_start", agent_name="alpha", timestamp="2026-03-01T09:00:00Z"),
        event("s1", model="gpt-4o", tokens_in=100, tokens_out=50, duration_ms=200,
              timestamp="2026-03-01T09:00:01Z"),
        event("s1", "tool_call", tool_call={"name": "search"}, duration_ms=100,
              timestamp="2026-03-01T09:00:02Z"),
        event("s1", "session_end", status="completed", timestamp="2026-03-01T09:00:10Z"),

        event("s2", "session_start", agent_name="beta", timestamp="2026-03-02T23:59:00Z"),
        event("s2", model="gpt-4o", tokens_in=300, tokens_out=100, duration_ms=400,
              timestamp="2026-03-02T23:59:30Z"),
        event("s2", model="claude", tokens_in=50, tokens_out=50, timestamp="2026-03-03T00:00:10Z"),
        event("s2", "error", output_data={"error": "boom"}, timestamp="2026-03-03T00:00:20Z"),
        event("s2", "session_end", status="error", timestamp="2026-03-03T00:01:00Z"),

        event("s3", agent_name="alpha", model="gpt-4o", tokens_in=10, tokens_out=5, duration_ms=100,
              timestamp="2026-03-05T15:00:00Z"),

        event("old", "session_start", agent_name="gamma", timestamp="2025-11-01T08:00:00Z"),
        # An empty model name counts as no model.
        event("old", model="", tokens_in=5, tokens_out=5, timestamp="2025-11-01T08:00:05Z"),
        event("old", "session_end", timestamp="2025-11-01T08:00:30Z"),
    ])


def hourly(**counts):
    return [{"hour": h, "event_count": counts.get(f"h{h}", 0)} for h in range(24)]


def test_analytics_values_are_exact(db, tmp_path):
    seed(db, tmp_path)
    assert get_analytics(db, at=AT) == {
        "overview": {
            "total_sessions": 4, "active_sessions": 1, "completed_sessions": 2, "error_sessions": 1,
            "error_rate": 25.0, "error_session_rate": 25.0, "total_events": 13, "total_tokens": 675,
            "total_tokens_in": 465, "total_tokens_out": 210, "avg_tokens_per_session": 168.75,
            "earliest_session": "2025-11-01T08:00:00.000Z", "latest_session": "2026-03-05T15:00:00.000Z",
        },
        # Ended sessions only: 10 s, 2 min (across midnight) and 30 s.
        "duration": {"avg_ms": 53333.33, "min_ms": 10000, "max_ms": 120000},
        "top_agents": [
            {"agent_name": "beta", "session_count": 1, "total_tokens": 500, "avg_tokens": 500.0},
            {"agent_name": "alpha", "session_count": 2, "total_tokens": 165, "avg_tokens": 82.5},
            {"agent_name": "gamma", "session_count": 1, "total_tokens": 10, "avg_tokens": 10.0},
        ],
        "model_usage": [
            {"model": "gpt-4o", "call_count": 3, "total_tokens": 565, "total_tokens_in": 410,
             "total_tokens_out": 155, **NO_PARTS,
             "avg_duration_ms": 233.33},
            {"model": "claude", "call_count": 1, "total_tokens": 100, "total_tokens_in": 50,
             "total_tokens_out": 50, **NO_PARTS,
             "avg_duration_ms": None},
        ],
        "event_types": [
            {"event_type": "llm_call", "count": 5},
            {"event_type": "error", "count": 1},
            {"event_type": "tool_call", "count": 1},
        ],
        # "old" started more than 90 days before AT.
        "sessions_over_time": [
            {"day": "2026-03-01", "session_count": 1, "total_tokens": 150},
            {"day": "2026-03-02", "session_count": 1, "total_tokens": 500},
            {"day": "2026-03-05", "session_count": 1, "total_tokens": 15},
        ],
        "hourly_activity": hourly(h0=3, h8=3, h9=4, h15=1, h23=2),
        # gpt-4o: s1 100 x $1 + 50 x $2 per million = $0.0002, s2 300 + 2 x 100 = $0.0005,
        # s3 10 + 2 x 5 = $0.00002; claude (s2) and the call without a model ("old") unpriced.
        "costs": {
            "total_usd": 0.00072, "unpriced_calls": 2,
            "by_agent": [
                {"agent_name": "beta", "cost_usd": 0.0005, "unpriced_calls": 1, "session_count": 1},
                {"agent_name": "alpha", "cost_usd": 0.00022, "unpriced_calls": 0, "session_count": 2},
                {"agent_name": "gamma", "cost_usd": None, "unpriced_calls": 1, "session_count": 1},
            ],
            "by_model": [
                {"model": "gpt-4o", "cost_usd": 0.00072, "unpriced_calls": 0, "call_count": 3},
                {"model": "claude", "cost_usd": None, "unpriced_calls": 1, "call_count": 1},
                {"model": None, "cost_usd": None, "unpriced_calls": 1, "call_count": 1},
            ],
            # By the sessions' start day; "old" is before the 90 days.
            "by_day": [
                {"day": "2026-03-01", "cost_usd": 0.0002, "unpriced_calls": 0, "session_count": 1},
                {"day": "2026-03-02", "cost_usd": 0.0005, "unpriced_calls": 1, "session_count": 1},
                {"day": "2026-03-05", "cost_usd": 0.00002, "unpriced_calls": 0, "session_count": 1},
            ],
        },
    }


def test_empty_database(db):
    assert get_analytics(db, at=AT) == {
        "overview": {
            "total_sessions": 0, "active_sessions": 0, "completed_sessions": 0, "error_sessions": 0,
            "error_rate": 0.0, "error_session_rate": 0.0, "total_events": 0, "total_tokens": 0,
            "total_tokens_in": 0, "total_tokens_out": 0, "avg_tokens_per_session": 0.0,
            "earliest_session": None, "latest_session": None,
        },
        "duration": {"avg_ms": None, "min_ms": None, "max_ms": None},
        "top_agents": [],
        "model_usage": [],
        "event_types": [],
        "sessions_over_time": [],
        "hourly_activity": hourly(),
        "costs": {"total_usd": None, "unpriced_calls": 0, "by_agent": [], "by_model": [], "by_day": []},
    }


def test_window_is_the_last_90_calendar_days():
    assert first_day(AT) == "2025-12-11T00:00:00.000Z"


def test_never_stale_after_an_ingest(db):
    seed(db)
    before = get_analytics(db, at=AT)
    ingest_events(db, [event("s3", model="claude", tokens_in=1, tokens_out=2, duration_ms=50,
                             timestamp="2026-03-05T15:30:00Z")])
    after = get_analytics(db, at=AT)
    assert after["overview"]["total_events"] == before["overview"]["total_events"] + 1
    assert after["model_usage"][1] == {"model": "claude", "call_count": 2, "total_tokens": 103,
                                       "total_tokens_in": 51, "total_tokens_out": 52, **NO_PARTS,
                                       "avg_duration_ms": 50.0}
    assert after["event_types"][0] == {"event_type": "llm_call", "count": 6}
    assert after["hourly_activity"][15] == {"hour": 15, "event_count": 2}


def test_duplicates_are_not_counted_twice(db):
    batch = [event("d", event_id="x1", model="m", tokens_in=7, timestamp="2026-03-05T10:00:00Z")]
    ingest_events(db, batch)
    ingest_events(db, batch)
    ingest_events(db, batch + [event("d", event_id="x2", model="m", tokens_in=1,
                                     timestamp="2026-03-05T11:00:00Z")])
    data = get_analytics(db, at=AT)
    assert data["model_usage"][0]["call_count"] == 2
    assert data["model_usage"][0]["total_tokens_in"] == 8
    assert data["overview"]["total_events"] == 2


def _rebuild(db):
    """The backend's own rebuild of the rollup from the events table."""
    from obsctl.store.postgres import event_stats as pg_event_stats

    (pg_event_stats if db.backend == "postgresql" else event_stats).rebuild(db.conn)


def _stats(db):
    return rollup_rows(db.conn)


def test_rollup_maintained_by_ingest_equals_a_rebuild(db):
    seed(db)
    maintained = _stats(db)
    _rebuild(db)
    assert _stats(db) == maintained
    assert sum(row[3] for row in maintained) == 13


def test_rollup_is_repaired_when_events_change_behind_ingest(db):
    seed(db)
    with db.conn:
        db.conn.execute("DELETE FROM events WHERE model = 'claude'")
    models = [m["model"] for m in get_analytics(db, at=AT)["model_usage"]]
    assert models == ["gpt-4o"]
    maintained = _stats(db)
    _rebuild(db)
    assert _stats(db) == maintained


def test_event_rows_name_columns_of_the_events_table(db):
    # The rollup and the session bookkeeping read rows by field name; the INSERT writes the
    # fields by the same names, so each must be a column.
    columns = {d[0] for d in db.conn.execute("SELECT * FROM events LIMIT 0").description}
    assert set(EVENT_COLUMNS) <= columns, set(EVENT_COLUMNS) - columns


def _plan(db, sql, params=()):
    return " | ".join(row[3] for row in db.conn.execute("EXPLAIN QUERY PLAN " + sql, params))


@pytest.mark.sqlite_only
def test_no_analytics_query_reads_every_session_or_event(db):
    # Flat as data grows: every section reads a rollup or searches an index.
    from obsctl.store.sqlite import analytics as store

    seed(db)
    queries = {"overview": (store._OVERVIEW, ()), "starts": (store._STARTS, ()),
               "durations": (store._DURATIONS, ()), "top agents": (store._TOP_AGENTS, (10,)),
               "by day": (store._SESSIONS_BY_DAY, ("2026-01-01T00:00:00.000Z",)),
               "models": (store._MODEL_USAGE, ()), "types": (store._EVENT_TYPES, ()),
               "hourly": (store._HOURLY, ()), "cost by model": (store._COST_BY_MODEL, ())}
    for name, (sql, params) in queries.items():
        plan = _plan(db, sql, params)
        assert "SCAN sessions" not in plan and "SCAN events" not in plan, (name, plan)
        assert "SEARCH events" not in plan, (name, plan)
    assert _plan(db, *queries["durations"]).count("idx_sessions_duration") == 2
    assert "SEARCH session_stats USING PRIMARY KEY (day>?)" in _plan(db, *queries["by day"])


def test_rollup_is_repaired_when_events_are_added_behind_ingest(db):
    seed(db)
    columns = ", ".join(c for c in EVENT_COLUMNS if c != "event_id")
    with db.conn:  # a copy of an event under a new id, as a script writing the file might
        db.conn.execute(f"INSERT INTO events (event_id, {columns}) SELECT 'copy', {columns} FROM events "
                        "WHERE model = 'claude'")
    claude = next(m for m in get_analytics(db, at=AT)["model_usage"] if m["model"] == "claude")
    assert claude["call_count"] == 2
    assert db.conn.execute("SELECT events FROM event_totals").fetchone()[0] == 14


@pytest.mark.postgresql_only
def test_session_durations_are_read_through_their_index_on_postgresql(db):
    # The expression of analytics' shortest/longest query must be the indexed one.
    from obsctl.store.postgres import analytics as pg_analytics

    seed(db)
    db.conn.execute("SET enable_seqscan = off")
    plan = "\n".join(r[0] for r in db.conn.execute("EXPLAIN " + pg_analytics._DURATIONS))
    assert plan.count("idx_sessions_duration") == 2, plan


@pytest.mark.sqlite_only
def test_session_breakdown_searches_by_session_not_scans(db):
    from obsctl.store.sqlite.session_aggregates import _BREAKDOWN

    plan = " ".join(row[3] for row in db.conn.execute("EXPLAIN QUERY PLAN " + _BREAKDOWN, ["s"]))
    assert "SEARCH events USING" in plan and "(session_id=?)" in plan, plan


def test_api_equals_cli_json(db, cli, client):
    seed(db)
    response = client.get("/analytics")
    assert response.status_code == 200
    result = cli("analytics", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == response.get_json()
    assert response.get_json()["overview"]["total_events"] == 13


def test_cli_piped_prints_json(db, cli):
    seed(db)
    assert json.loads(cli("analytics").stdout)["overview"]["total_sessions"] == 4


def test_cli_terminal_panel_names_the_session_rate_and_its_denominator(db, cli, terminal):
    seed(db)
    out = " ".join(cli("analytics", env={"COLUMNS": "200"}).stdout.split())
    # error_rate is a share of sessions; the events line separates lifecycle events.
    assert "1 error); in error: 1 of 4 sessions (25.00%)" in out
    assert "events 13 (7 without session start/end)" in out


def test_analytics_has_its_own_rate_limit_group(make_app):
    app = make_app({"OBSCTL_RATE_LIMITS": "analytics=2/minute"})
    client = app.test_client()
    assert [client.get("/analytics").status_code for _ in range(3)] == [200, 200, 429]
    assert client.get("/sessions").status_code == 200


def test_session_views_share_the_sessions_limit(db, make_app):
    ingest_events(db, [event("s")])
    client = make_app({"OBSCTL_RATE_LIMITS": "sessions=3/minute"}).test_client()
    codes = [client.get("/sessions").status_code, client.get("/sessions/s/explain").status_code,
             client.post("/sessions/compare", json={"session_a": "s", "session_b": "s"}).status_code,
             client.get("/sessions/s/export").status_code]
    assert codes == [200, 200, 200, 429]
