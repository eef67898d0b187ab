"""The seven metrics over hand-built windows, with values computed by hand."""

from __future__ import annotations

import pytest

from obsctl.errors import InvalidInput
from obsctl.services.ingest import ingest_events
from obsctl.services.metrics import (
    METRICS,
    compute_metric,
    compute_metric_groups,
    compute_metrics,
)
from obsctl.store.sql import POSTGRES, SQLITE
from obsctl.store.sql import metrics as store
from tests.conftest import event, use_prices

SINCE, UNTIL = "2026-01-01T11:00:00.000Z", "2026-01-01T12:00:00.000Z"


def ts(hhmm: str) -> str:
    return f"2026-01-01T{hhmm}:00.000Z"


@pytest.fixture
def pricer(db, tmp_path):
    """The prices the events are costed with at ingest: gpt-test $2 / $10 per million tokens."""
    return use_prices(db, tmp_path, {"gpt-test": {"input_per_mtok": 2, "output_per_mtok": 10}})


@pytest.fixture
def window(db, pricer):
    """Two sessions with events in 11:00-12:00 and one with none inside it.

    In the window: alpha/s1 llm 100 ms (100+50 tokens of gpt-test), tool 200 ms, failed tool
    300 ms; beta/s2 llm 400 ms (1000+500 tokens of gpt-test), an error without duration, an
    unpriced llm call 1000 ms (10+10 tokens). Lifecycle events and events outside are ignored.
    """
    ingest_events(db, [
        event("s1", "session_start", agent_name="alpha", timestamp=ts("11:00"), duration_ms=9999),
        event("s1", "llm_call", timestamp=ts("11:10"), model="gpt-test", tokens_in=100,
              tokens_out=50, duration_ms=100),
        event("s1", "tool_call", timestamp=ts("11:20"), tool_call={"name": "search"}, duration_ms=200),
        event("s1", "tool_call", timestamp=ts("11:30"), tool_call={"name": "search", "error": "boom"},
              duration_ms=300),
        event("s1", "session_end", timestamp=ts("11:40"), tokens_in=5000),
        event("s2", "session_start", agent_name="beta", timestamp=ts("10:00")),
        event("s2", "llm_call", timestamp=ts("10:30"), model="gpt-test", tokens_in=7, duration_ms=5),
        event("s2", "llm_call", timestamp=ts("11:15"), model="gpt-test", tokens_in=1000,
              tokens_out=500, duration_ms=400),
        event("s2", "error", timestamp=ts("11:25")),
        event("s2", "llm_call", timestamp=ts("11:35"), model="unpriced-model", tokens_in=10,
              tokens_out=10, duration_ms=1000),
        event("s3", "session_start", agent_name="alpha", timestamp=ts("10:59")),
        event("s3", "error", timestamp=ts("10:59"), duration_ms=50000),
        event("s3", "error", timestamp=ts("12:00"), duration_ms=50000),
    ])
    return db


def all_metrics(db, agent=None):
    return compute_metrics(db, METRICS, since=SINCE, until=UNTIL, agent=agent)


def test_metric_names_are_the_seven_of_the_spec():
    assert set(METRICS) == {"avg_duration_ms", "p95_duration_ms", "error_rate", "tool_error_rate",
                            "avg_tokens", "avg_cost", "session_count"}


def test_all_metrics_over_the_window(window, pricer):
    assert all_metrics(window) == pytest.approx({
        "avg_duration_ms": (100 + 200 + 300 + 400 + 1000) / 5,
        "p95_duration_ms": 1000.0,
        "error_rate": 100 * 2 / 6,
        "tool_error_rate": 50.0,
        "avg_tokens": (150 + 1520) / 2,
        # s1: 100*2e-6 + 50*10e-6 = 0.0007; s2: 1000*2e-6 + 500*10e-6 = 0.007; unpriced adds 0.
        "avg_cost": (0.0007 + 0.007) / 2,
        "session_count": 1,
    })


def test_agent_filter_uses_the_session_agent(window, pricer):
    assert all_metrics(window, agent="alpha") == pytest.approx({
        "avg_duration_ms": 200.0,
        "p95_duration_ms": 300.0,
        "error_rate": 100 / 3,
        "tool_error_rate": 50.0,
        "avg_tokens": 150.0,
        "avg_cost": 0.0007,
        "session_count": 1,
    })
    beta = all_metrics(window, agent="beta")
    assert beta["avg_duration_ms"] == 700.0
    assert beta["tool_error_rate"] is None
    assert beta["session_count"] == 0
    assert beta["avg_cost"] == pytest.approx(0.007)


def test_no_data_is_none_except_session_count(window, pricer):
    values = all_metrics(window, agent="nobody")
    assert values == {m: None for m in METRICS} | {"session_count": 0}


def test_empty_database_has_no_data(db):
    assert compute_metric(db, "error_rate", since=SINCE) is None
    assert compute_metric(db, "session_count", since=SINCE) == 0


def test_open_ended_window_includes_later_events(window):
    # until=None: the 12:00 error of s3 (50000 ms) now counts.
    assert compute_metric(window, "avg_duration_ms", since=SINCE) == pytest.approx(52000 / 6)
    assert compute_metric(window, "error_rate", since=SINCE) == pytest.approx(100 * 3 / 7)


def test_avg_cost_is_none_when_nothing_is_priced(db):
    # Without the override gpt-test has no price: its calls were stored unpriced.
    ingest_events(db, [event("s1", timestamp=ts("11:10"), model="gpt-test", tokens_in=100, tokens_out=50)])
    assert compute_metric(db, "avg_cost", since=SINCE, until=UNTIL) is None


def test_avg_cost_counts_sessions_with_only_unpriced_events(db, pricer):
    ingest_events(db, [
        event("a", timestamp=ts("11:05"), model="gpt-test", tokens_in=1_000_000),
        event("b", timestamp=ts("11:05"), model="mystery", tokens_in=1_000_000),
    ])
    # $2 for session a, nothing for b: the mean over both sessions is $1.
    assert compute_metric(db, "avg_cost", since=SINCE, until=UNTIL) == pytest.approx(1.0)


@pytest.mark.parametrize("n, expected", [(1, 1), (2, 2), (19, 19), (20, 19), (21, 20), (100, 95),
                                         (101, 96)])
def test_p95_is_nearest_rank(db, n, expected):
    # Durations 1..n in shuffled order: nearest rank is the ceil(0.95 n)-th smallest.
    order = sorted(range(1, n + 1), key=lambda v: (v * 7919) % (n + 13))
    ingest_events(db, [event("p", timestamp=ts("11:30"), duration_ms=v) for v in order])
    assert compute_metric(db, "p95_duration_ms", since=SINCE, until=UNTIL) == expected


def test_tool_events_include_type_tool_error_without_tool_call(db):
    ingest_events(db, [
        event("t", "tool_error", timestamp=ts("11:01")),
        event("t", "tool_call", timestamp=ts("11:02")),
        event("t", "llm_call", timestamp=ts("11:03"), tool_call={"name": "x"}),
        event("t", "llm_call", timestamp=ts("11:04"), output_data={"error": "not a tool"}),
    ])
    # Tool events: the first three; only tool_error is an error among them.
    assert compute_metric(db, "tool_error_rate", since=SINCE, until=UNTIL) == pytest.approx(100 / 3)
    assert compute_metric(db, "error_rate", since=SINCE, until=UNTIL) == 50.0


def test_unknown_metric_names_the_valid_ones(db):
    with pytest.raises(InvalidInput) as info:
        compute_metric(db, "latency", since=SINCE)
    assert "latency" in info.value.message
    assert all(name in info.value.message for name in METRICS)


def test_groups_answer_each_query(window, pricer):
    queries = [("error_rate", SINCE, UNTIL, None), ("avg_tokens", SINCE, UNTIL, "alpha"),
               ("session_count", SINCE, UNTIL, "beta"), ("error_rate", SINCE, UNTIL, "alpha")]
    results = compute_metric_groups(window, queries)
    assert results == pytest.approx({
        ("error_rate", SINCE, UNTIL, None): 100 * 2 / 6,
        ("avg_tokens", SINCE, UNTIL, "alpha"): 150.0,
        ("session_count", SINCE, UNTIL, "beta"): 0,
        ("error_rate", SINCE, UNTIL, "alpha"): 100 / 3,
    })


@pytest.mark.sqlite_only
@pytest.mark.parametrize("agent, index", [(None, "idx_events_ts"),
                                           ("alpha", "idx_sessions_agent_last_event")])
def test_window_queries_use_indexes(db, agent, index):
    where, params = store._window(SQLITE, SINCE, UNTIL, agent)
    plan = " | ".join(row[3] for row in db.conn.execute(f"EXPLAIN QUERY PLAN SELECT COUNT(*) {where}",
                                                         params))
    assert "SCAN" not in plan, plan
    assert f"USING INDEX {index}" in plan, plan


@pytest.mark.postgresql_only
@pytest.mark.parametrize("agent, index", [(None, "_timestamp_idx"),
                                           ("alpha", "idx_sessions_agent_")])
def test_window_queries_can_use_indexes_on_postgresql(db, agent, index):
    # The planner prefers a scan of these few rows; with scans disabled it must still find
    # an index the window's bounds are written for (idx_events_ts is, on each partition of
    # events, <partition>_timestamp_idx; an agent's sessions are found through
    # idx_sessions_agent_last_event or idx_sessions_agent_started, as the few rows' costs
    # come out).
    where, params = store._window(POSTGRES, SINCE, UNTIL, agent)
    db.conn.execute("SET enable_seqscan = off")
    plan = "\n".join(r[0] for r in db.conn.execute(f"EXPLAIN SELECT COUNT(*) {where}".replace("%s", "?"),
                                                    params))
    assert index in plan and "Seq Scan" not in plan, plan
