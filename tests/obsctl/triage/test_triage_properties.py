"""Invariants of triage and postmortems over generated sessions (hypothesis).

Each example builds a fresh in-memory database through the real ingest service: a session
of random LLM calls, tool calls (some repeated, some failing), decisions and errors, with
or without a session_end, and a random baseline of the same agent's earlier sessions.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from obsctl.services.ingest import ingest_events
from obsctl.services.postmortem import postmortem_session
from obsctl.services.triage import grade_for, triage_session
from obsctl.services.triage.findings import SEVERITY_RANK
from obsctl.timeutil import format_ts
from obsctl.vocabulary import GRADES
from tests import triage_scenarios as sc
from tests.store_support import open_db

MODELS = ["gpt-4o", "in-house-llm", None]
TOOLS = ["search", "fetch"]
INPUTS = [{"q": 1}, {"q": 2}]
ERROR_TYPES = ["error", "timeout", "rate_limit", "llm_error"]
MESSAGES = ["rate limit exceeded, retry in 3s", "connection refused by 10.0.0.1", "bad input 'x'",
            None]

tokens = st.integers(0, 5000)
durations = st.one_of(st.none(), st.floats(0, 20000, allow_nan=False))


@st.composite
def steps(draw):
    kind = draw(st.sampled_from(["llm", "tool", "decision", "error"]))
    event = {"duration_ms": draw(durations)}
    if kind == "llm":
        event.update(event_type="llm_call", model=draw(st.sampled_from(MODELS)),
                     tokens_in=draw(tokens), tokens_out=draw(tokens))
    elif kind == "tool":
        call = {"name": draw(st.sampled_from(TOOLS)), "input": draw(st.sampled_from(INPUTS))}
        if draw(st.booleans()) and draw(st.booleans()):
            call["error"] = draw(st.sampled_from(MESSAGES[:3]))
        event.update(event_type="tool_call", tool_call=call)
    elif kind == "decision":
        event.update(event_type="decision", decision_trace={"reasoning": "next"})
    else:
        message = draw(st.sampled_from(MESSAGES))
        event.update(event_type=draw(st.sampled_from(ERROR_TYPES)), model=draw(st.sampled_from(MODELS)),
                     tokens_in=draw(tokens), output_data={"error": message} if message else None)
    return {k: v for k, v in event.items() if v is not None}


@st.composite
def sessions(draw):
    """(events of the session "s", baseline events) with increasing timestamps."""
    # Blocks of repeated steps, so that runs of identical tool calls (loops) are common.
    blocks = draw(st.lists(st.tuples(steps(), st.integers(1, 7)), min_size=0, max_size=8))
    body = [dict(step) for step, repeat in blocks for _ in range(repeat)]
    gaps = draw(st.lists(st.integers(1, 120_000), min_size=len(body), max_size=len(body)))
    events = [{"session_id": "s", "event_type": "session_start", "agent_name": "agent",
               "timestamp": format_ts(sc.T0)}]
    elapsed, offsets = 0, []
    for step, gap in zip(body, gaps):
        elapsed += gap
        offsets.append(elapsed)
        events.append({**step, "session_id": "s", "timestamp": format_ts(sc.T0 + timedelta(milliseconds=elapsed))})
    end = draw(st.sampled_from([None, "completed", "error"]))
    if end:
        events.append({"session_id": "s", "event_type": "session_end", "status": end,
                       "timestamp": format_ts(sc.T0 + timedelta(milliseconds=elapsed + 1))})
    baseline = []
    for i in range(draw(st.integers(0, 5))):
        start = sc.T0 - timedelta(days=1 + i)
        sid = f"base-{i}"
        baseline.append({"session_id": sid, "event_type": "session_start", "agent_name": "agent",
                         "timestamp": format_ts(start)})
        for j in range(draw(st.integers(1, 6))):
            step = draw(steps())
            baseline.append({**step, "session_id": sid,
                             "timestamp": format_ts(start + timedelta(seconds=j + 1))})
    return events, baseline, offsets


@st.composite
def tool_errors(draw):
    call = {"name": draw(st.sampled_from(TOOLS)), "input": draw(st.sampled_from(INPUTS)),
            "error": draw(st.sampled_from(MESSAGES[:3]))}
    return {"event_type": "tool_call", "tool_call": call, "duration_ms": draw(durations)}


@st.composite
def extra_errors(draw, offsets: list[int]):
    """One more error event: often a failed tool call right after an existing event (so it
    can land inside a run of identical calls), else anywhere up to a minute after the end."""
    event = draw(st.one_of(tool_errors(), steps().filter(lambda e: e["event_type"] in ERROR_TYPES)))
    if offsets and draw(st.booleans()):
        at = draw(st.sampled_from(offsets))  # same timestamp, later arrival: sorts right after
    else:
        at = draw(st.integers(0, (offsets[-1] if offsets else 0) + 60_000))
    return {k: v for k, v in event.items() if v is not None} | {
        "session_id": "s", "timestamp": format_ts(sc.T0 + timedelta(milliseconds=at))}


@pytest.fixture(scope="module")
def pricer(tmp_path_factory):
    return sc.pricer(tmp_path_factory.mktemp("prices"))


def fresh_db(events, baseline):
    db = open_db(":memory:")
    if baseline:
        ingest_events(db, baseline)
    ingest_events(db, events)
    return db


PROPERTY_SETTINGS = settings(max_examples=100, deadline=None,
                             suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                    HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(data=st.data(), session=sessions())
def test_adding_an_error_never_raises_the_health_score(pricer, data, session):
    events, baseline, offsets = session
    db = fresh_db(events, baseline)
    before = triage_session(db, "s", pricer=pricer)
    ingest_events(db, [data.draw(extra_errors(offsets))])
    after = triage_session(db, "s", pricer=pricer)
    assert after["metrics"]["error_count"] == before["metrics"]["error_count"] + 1
    assert after["health_score"] <= before["health_score"], (before["score_penalties"],
                                                             after["score_penalties"])


@PROPERTY_SETTINGS
@given(session=sessions())
def test_severity_is_the_worst_findings_and_the_score_is_graded(pricer, session):
    events, baseline, _ = session
    report = triage_session(fresh_db(events, baseline), "s", pricer=pricer)
    if report["findings"]:
        assert report["severity"] == max((f["severity"] for f in report["findings"]),
                                         key=SEVERITY_RANK.__getitem__)
    else:
        assert report["severity"] == "healthy"
    # Causes lead (a loop the agent gave up on, an unacknowledged regression of its
    # configuration); the symptoms after them are most severe first.
    causes = [f["evidence"].get("caused_failure") or f["category"] == "change" for f in report["findings"]]
    assert causes == sorted(causes, reverse=True)
    ranks = [SEVERITY_RANK[f["severity"]] for f, cause in zip(report["findings"], causes) if not cause]
    assert ranks == sorted(ranks, reverse=True)
    assert 0 <= report["health_score"] <= 100
    assert report["grade"] == grade_for(report["health_score"])
    # The grade never reads better than the severity allows: A+ only when healthy, A at best
    # with an info finding, B+ with a warning, C when critical.
    best = {"healthy": "A+", "info": "A", "warning": "B+", "critical": "C"}[report["severity"]]
    assert GRADES.index(report["grade"]) >= GRADES.index(best), (report["grade"], report["severity"])
    # The severity term is what the cap takes, so the terms still add up to the score.
    assert abs(max(0, 100 - sum(report["score_penalties"].values())) - report["health_score"]) <= 0.051


@PROPERTY_SETTINGS
@given(session=sessions())
def test_likelihoods_are_sorted_and_within_0_and_1(pricer, session):
    events, baseline, _ = session
    report = postmortem_session(fresh_db(events, baseline), "s", pricer=pricer)
    likelihoods = [f["likelihood"] for f in report["contributing_factors"]]
    assert likelihoods == sorted(likelihoods, reverse=True)
    assert all(0.0 <= x <= 1.0 for x in likelihoods)
    factors = {f["factor"] for f in report["contributing_factors"]}
    assert {r["factor"] for r in report["recommendations"]} <= factors
    cascades = report["error_cascade"]["cascades"]
    assert sum(c["length"] for c in cascades) == report["error_cascade"]["total_errors"]
    cost = report["cost_breakdown"]["total_usd"]
    assert (report["severity"] == "none") == (report["error_cascade"]["total_errors"] == 0
                                              and (cost is None or cost < 1))


def test_grade_bands():
    assert [grade_for(s) for s in (100, 95, 94.9, 90, 85, 80, 79.9, 70, 65, 60, 50, 49.9, 0)] == [
        "A+", "A+", "A", "A", "B+", "B", "B-", "B-", "C+", "C", "D", "F", "F"]


def test_an_error_inside_a_loop_does_not_break_it_or_raise_the_score(db, pricer):
    """The case the generated sessions rarely hit: a failed call of another input lands inside a
    run of identical successful calls. It does not split the run (two runs shorter than 5 would
    lose the loop finding, and at 10+ calls drop it from critical to warning: a better score for
    one more error)."""
    sc.runaway_loop(db, repeats=7)
    before = triage_session(db, "loop", pricer=pricer)
    # Same timestamp as the third fetch_url call, stored later: it sorts right after it.
    ingest_events(db, [{"session_id": "loop", "event_type": "tool_call", "timestamp": sc.ts(6),
                        "tool_call": {"name": "fetch_url", "input": {"url": "https://example.com/q"},
                                      "error": "HTTP 404 not found"}}])
    after = triage_session(db, "loop", pricer=pricer)
    # Still one loop of the 7 identical calls, now with the error and the failing tool beside it.
    assert [f["category"] for f in after["findings"]] == ["errors", "tools", "loop"]
    assert after["findings"][-1]["title"].startswith("Loop: fetch_url called 7 times in a row")
    # Before: 100 - 7 = 93, capped at 89.9 by the loop's warning. After:
    # 100 - (40 x 1/16 + 2) - 7 = 88.5.
    assert (before["health_score"], after["health_score"]) == (89.9, 88.5)


def test_a_failed_call_inside_a_critical_loop_keeps_it_critical(db, pricer):
    """Found by the property above: 10 identical calls with a failed call of another input after
    the first were a run of 9 (a warning) and the score rose from 64.9 to 84.4."""
    calls = [{"session_id": "s10", "event_type": "tool_call", "timestamp": sc.ts(i),
              "tool_call": {"name": "search", "input": {"q": 2}}} for i in range(1, 11)]
    ingest_events(db, [{"session_id": "s10", "event_type": "session_start", "agent_name": "agent",
                        "timestamp": sc.ts(0)}, *calls])
    before = triage_session(db, "s10", pricer=pricer)
    ingest_events(db, [{"session_id": "s10", "event_type": "tool_call", "timestamp": sc.ts(1),
                        "tool_call": {"name": "search", "input": {"q": 1}, "error": "rate limit exceeded"}}])
    after = triage_session(db, "s10", pricer=pricer)
    [loop] = [f for f in after["findings"] if f["category"] == "loop"]
    assert (loop["severity"], loop["title"]) == ("critical", "Loop: search called 10 times in a row with the same input")
    assert after["health_score"] <= before["health_score"]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), session=sessions())
def test_a_session_reads_the_same_the_long_way(pricer, data, session):
    """What a session of more than 10,000 events gets (services/triage/long.py: SQL aggregates,
    one pass over its tool calls, its errors) gives the reports a whole read gives."""
    import obsctl.services.triage.analysis as analysis

    events, baseline, offsets = session
    db = fresh_db(events, baseline)
    ingest_events(db, [data.draw(extra_errors(offsets))])

    def reports():
        post = postmortem_session(db, "s", pricer=pricer)
        post["markdown"] = post["markdown"].replace(post.pop("generated_at"), "")
        return triage_session(db, "s", pricer=pricer), post

    whole = reports()
    original = analysis.ANALYSIS_EVENTS
    analysis.ANALYSIS_EVENTS = -1
    try:
        long = reports()
    finally:
        analysis.ANALYSIS_EVENTS = original
    assert long == whole
