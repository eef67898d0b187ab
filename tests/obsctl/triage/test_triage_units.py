"""The building blocks of triage: fingerprints, error kinds, robust statistics, drift,
loops, and the candidates' SQL severity rank agreeing with the Python rule."""

from __future__ import annotations

import re

import pytest

from obsctl.services.error_kinds import classify_error, fingerprint, normalise_message
from obsctl.services.ingest import ingest_events
from obsctl.services.postmortem import (
    COST_SEVERITIES,
    SEV_HIGH_RATE,
    SEV_MEDIUM_COUNT,
    SEV_MEDIUM_RATE,
    SEVERITIES,
    severity_for,
)
from obsctl.services.triage.analysis import analyse_session
from obsctl.services.triage.anomaly import check_metric, median, nearest_rank, robust_scale
from obsctl.store.sql import triage as shared
from obsctl.store.sqlite import triage as store
from tests import triage_scenarios as sc


@pytest.mark.parametrize("a,b", [
    ("Rate limit exceeded, retry after 20s (request req_8f3a2b)",
     "Rate limit exceeded, retry after 3s (request req_77b1c2)"),
    ("HTTP 503 from 10.0.0.12:8080", "HTTP 503 from 10.0.0.7:443"),
    ("user 'alice' not found", 'user "bob" not found'),
    ("object 3f2a9c1e-0b4d-4c8e-9a7b-112233445566 is locked",
     "object 00000000-1111-2222-3333-444444444444 is locked"),
    ("bad pointer 0x7ffe1234 in worker", "bad pointer 0xdeadbeef in worker"),
    ("commit a1b2c3d4e5f6 rejected", "commit 0f9e8d7c6b5a rejected"),
    ("session sess-42 expired", "session sess-9001 expired"),
])
def test_messages_differing_only_in_variable_parts_share_a_pattern(a, b):
    assert normalise_message(a) == normalise_message(b)


def test_normalised_forms():
    assert normalise_message("Retry after 20s (request req_8f3a2b)") == "retry after <n>s (request <id>)"
    assert normalise_message("can't reach 'db'  at\n10.0.0.1") == "can't reach <str> at <n>.<n>"
    assert normalise_message("Timeout") != normalise_message("Connection refused")


def test_fingerprint_includes_event_type_and_tool():
    pattern = normalise_message("failed")
    assert fingerprint("tool_call", "a", pattern) != fingerprint("tool_call", "b", pattern)
    assert fingerprint("error", None, pattern) != fingerprint("llm_error", None, pattern)
    assert len(fingerprint("error", None, pattern)) == 12


@pytest.mark.parametrize("event_type,message,kind", [
    ("rate_limit", None, "rate_limit"),
    ("llm_error", "HTTP 429 Too Many Requests", "rate_limit"),
    ("timeout", "connection reset", "timeout"),
    ("tool_timeout", None, "timeout"),
    ("tool_call", "deadline exceeded", "timeout"),
    ("llm_error", "This model's maximum context length is 8192 tokens", "context_length"),
    ("tool_call", "401 Unauthorized", "auth"),
    ("tool_call", "file not found: /tmp/x", "not_found"),
    ("tool_call", "invalid argument 'limit'", "invalid_input"),
    ("llm_error", "503 Service Unavailable", "server"),
    ("tool_call", "connection refused", "network"),
    ("error", "Agent gave up", "other"),
])
def test_error_kinds(event_type, message, kind):
    assert classify_error(event_type, message) == kind


def test_median_and_nearest_rank():
    assert median([3, 1, 2]) == 2.0
    assert median([4, 1, 2, 3]) == 2.5
    assert nearest_rank(list(range(1, 101)), 95) == 95.0
    assert nearest_rank([10.0], 50) == 10.0
    assert nearest_rank([1, 2, 3, 4], 50) == 2.0


def test_robust_scale_falls_back_and_is_floored():
    # MAD = median(3, 1, 1, 87) = 2: the outlier does not widen the scale
    assert robust_scale([10, 12, 14, 100], 13, 1) == pytest.approx(1.4826 * 2)
    # MAD 0, mean absolute deviation 25: 1.2533 x 25
    assert robust_scale([100, 100, 100, 200], 100, 1) == pytest.approx(1.2533 * 25)
    assert robust_scale([1000] * 4, 1000, 1) == 50.0  # 5% of the median
    assert robust_scale([0] * 4, 0, 1) == 1  # one unit


def test_drift_below_the_anomaly_threshold():
    samples = [1000, 1400, 1800, 2200, 2600]  # median 1800, MAD 400: scale 593.04
    check = check_metric("total_tokens", 3000, samples)
    # +66.7% and excess 1200 >= 1000, but z = 1200 / 593.04 = 2.02 < 3.5: drift, info
    assert (check.status, check.severity) == ("drift", "info")
    assert round(check.change_pct, 1) == 66.7
    assert check_metric("total_tokens", 3700, samples).severity == "warning"  # +105.6%
    assert check_metric("total_tokens", 2700, samples).status == "normal"  # +50% but excess 900


def test_below_the_baseline_is_never_a_finding():
    assert check_metric("total_tokens", 10, [5000, 5000, 5000]).status == "normal"


def test_too_few_samples_is_no_data():
    assert check_metric("total_tokens", 10, [5000, 5000]).status == "no_data"
    assert check_metric("cost_usd", None, [1, 1, 1]).status == "no_data"


def test_candidates_sql_rank_matches_the_python_rule(db, tmp_path):
    from tests.conftest import use_prices

    use_prices(db, tmp_path, {"m": {"input_per_mtok": 100_000, "output_per_mtok": 0}})  # $0.10 a token
    # (status, errors, successes, cost in USD), plus one session whose session_end itself carries an error
    cases = [("completed", 0, 9, 0), ("error", 4, 9, 0), ("error", 1, 49, 0), ("completed", 3, 9, 0),
             ("completed", 1, 19, 0), ("active", 3, 97, 0), ("completed", 2, 98, 0), ("error", 0, 9, 0),
             ("completed", 2000, 6001, 0), ("completed", 1999, 6002, 0),
             # the cost rule: $0.90 nothing, $1.50 SEV-4, $7 SEV-3, $25 SEV-2, the worse of both
             ("completed", 0, 9, 0.9), ("completed", 0, 9, 1.5), ("completed", 0, 9, 7), ("active", 0, 9, 25),
             ("completed", 1, 19, 25), ("error", 4, 9, 25), ("completed", 2, 98, 7)]
    for i, (status, errors, ok, cost) in enumerate(cases):
        events = [{"session_id": f"s{i}", "event_type": "timeout", "timestamp": sc.ts(j)} for j in range(errors)]
        events += [{"session_id": f"s{i}", "event_type": "llm_call", "timestamp": sc.ts(100 + j)}
                   for j in range(ok)]
        if cost:
            events[-1] |= {"model": "m", "tokens_in": round(cost * 10)}
        if status != "active":
            events.append({"session_id": f"s{i}", "event_type": "session_end", "status": status,
                           "timestamp": sc.ts(500), "output_data": {"error": "x"} if i == 1 else None})
        ingest_events(db, events)
    rows, total = db.triage.postmortem_candidates(min_errors=0, limit=100, agent=None, since=None,
                                                  high_rate=round(SEV_HIGH_RATE * 100),
                                                  medium_rate=round(SEV_MEDIUM_RATE * 100),
                                                  medium_count=SEV_MEDIUM_COUNT,
                                                  cost_floors=tuple(f for _, f in COST_SEVERITIES))
    assert total == len(cases)
    for row in rows:
        a = analyse_session(db, row["session_id"], db.pricer)
        counts = a.counts
        assert (row["event_count"], row["error_count"], row["body_events"], row["error_events"]) == (
            counts.event_count, counts.error_count, counts.body_events, counts.error_events), row
        assert (row["cost_usd"] or 0) == pytest.approx(a.cost["total_usd"] or 0), row
        expected = severity_for(row["status"], counts.error_events, counts.body_events, a.cost["total_usd"])
        assert SEVERITIES[row["severity_rank"] - 1] == expected, row
    by_id = {r["session_id"]: SEVERITIES[r["severity_rank"] - 1] for r in rows}
    assert [by_id[f"s{i}"] for i in range(10, 17)] == ["none", "SEV-4", "SEV-3", "SEV-2", "SEV-2", "SEV-1", "SEV-3"]
    assert {SEVERITIES[r["severity_rank"] - 1] for r in rows} == set(SEVERITIES)
    # the session_end's own error counts in error_count, not in error_events
    s1 = next(r for r in rows if r["session_id"] == "s1")
    assert (s1["error_count"], s1["error_events"], s1["body_events"]) == (5, 4, 13)


@pytest.mark.sqlite_only  # SQLite's EXPLAIN QUERY PLAN of the SQLite module's queries
def test_baseline_queries_use_the_indexes(db):
    """The baseline starts from the agent's sessions in the window and reaches their events
    through an index on events(session_id, ...); nothing scans a table."""
    args = ["a", "2026-01-01T00:00:00.000Z", "2026-01-08T00:00:00.000Z", "s", 10]
    for sql in (shared.baseline_sessions_sql("?"), shared.baseline_model_tokens_sql("?")):
        plan = " / ".join(row[3] for row in db.conn.execute(f"EXPLAIN QUERY PLAN {sql}", args))
        assert "idx_sessions_agent_started" in plan, plan
        assert "SCAN" not in plan, plan
        if "FROM events" in sql:
            assert re.search(r"SEARCH e USING (COVERING )?INDEX idx_events_session_\w+ \(session_id=\?", plan), plan
    # The latency references read the chosen baseline sessions' events by session.
    sql = store._DURATIONS.format(ids="?, ?")
    plan = " / ".join(row[3] for row in db.conn.execute(f"EXPLAIN QUERY PLAN {sql}", ["s1", "s2"]))
    assert "SCAN" not in plan, plan
    assert re.search(r"SEARCH e USING (COVERING )?INDEX idx_events_session_\w+ \(session_id=\?", plan), plan


def test_baseline_durations_read_back_exactly_on_both_stores(db):
    """A duration comes back as the number stored (a whole one as int): the latency reference of
    a baseline is the same on both stores (SQLite's JSON or text of a REAL keeps 15 digits)."""
    values = [1.3472052574361442, 0.1, 250, 1e-7, 123456789.12345679]
    ingest_events(db, [{"session_id": "b", "event_type": "tool_call", "event_id": f"d{i}", "duration_ms": v,
                        "timestamp": f"2026-03-01T00:00:0{i}.000Z", "tool_call": {"name": "t"}}
                       for i, v in enumerate(values)])
    durations = db.triage.baseline_durations(["b"])[("tool_call", "t")]
    assert durations == sorted(values)
    assert [type(v) for v in durations] == [type(v) for v in sorted(values)]
