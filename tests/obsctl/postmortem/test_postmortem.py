"""Postmortem reports of realistic sessions, and the candidates list."""

from __future__ import annotations

from datetime import timedelta

import pytest

from obsctl.errors import NotFound
from obsctl.services.ingest import ingest_events
from obsctl.services.postmortem import postmortem_candidates, postmortem_session, severity_for
from obsctl.timeutil import format_ts
from tests import triage_scenarios as sc
from tests.conftest import event


@pytest.fixture
def pricer(tmp_path):
    return sc.pricer(tmp_path)


@pytest.fixture
def cascade_report(db, pricer):
    sc.rate_limit_cascade(db)
    return postmortem_session(db, "rl", pricer=pricer)


def test_cascade_severity_title_and_fields(cascade_report):
    r = cascade_report
    assert r["severity"] == "SEV-1"  # status error and 5/8 errors >= 25%
    assert r["title"] == "researcher session rl failed: Rate limiting"
    assert list(r) == ["session_id", "agent_name", "generated_at", "severity", "severity_reason",
                       "event_count", "error_count", "body_events", "error_events",
                       "error_event_rate", "title", "summary", "status", "started_at", "ended_at",
                       "duration_ms", "timeline", "timeline_left_out", "error_cascade", "cost_breakdown",
                       "tool_performance", "contributing_factors", "recommendations", "markdown"]
    assert r["severity_reason"] == "status error and 5 of 6 events failed (83.33%), at least 25%"
    assert (r["event_count"], r["error_count"], r["body_events"], r["error_events"],
            r["error_event_rate"]) == (8, 5, 6, 5, 83.33)
    assert r["summary"].startswith("Session rl of agent researcher ran 6 events over 42.0 s and "
                                   "ended with status error. 5 of 6 events failed (83.33%) in 1 cascade(s)")


def test_cascade_timeline(cascade_report):
    timeline = cascade_report["timeline"]
    assert [(e["elapsed_ms"], e["event_type"], e["is_error"]) for e in timeline] == [
        (0.0, "session_start", False), (1000.0, "llm_call", False), (2000.0, "rate_limit", True),
        (4000.0, "rate_limit", True), (8000.0, "rate_limit", True), (40000.0, "tool_call", True),
        (41000.0, "error", True), (42000.0, "session_end", False)]
    assert [e["number"] for e in timeline] == list(range(1, 9)) and cascade_report["timeline_left_out"] == 0
    assert timeline[1]["description"] == "gpt-4o: 1,200 tokens in, 300 out"
    assert timeline[5]["description"] == ("web_search failed (timeout): web_search timed out after "
                                          "30000 ms")
    assert timeline[6]["description"] == "error: Agent gave up after 3 retries"
    assert timeline[5]["duration_ms"] == 30000.0


def test_error_cascade_links_each_failure_to_the_one_before(cascade_report):
    cascade = cascade_report["error_cascade"]
    assert (cascade["total_errors"], cascade["longest"], cascade["propagated"]) == (5, 5, True)
    [c] = cascade["cascades"]
    assert c["path"] == "rate_limit x3 -> timeout (web_search) -> other"
    assert c["recovered"] is False
    assert c["span_ms"] == 39000.0
    assert c["root_cause"]["kind"] == "rate_limit"
    assert [(e["event_id"], e["caused_by"], e["relation"]) for e in c["errors"]] == [
        ("rl-2", None, None), ("rl-3", "rl-2", "retry"), ("rl-4", "rl-3", "retry"),
        ("rl-5", "rl-4", "followed"), ("rl-6", "rl-5", "followed")]


def test_contributing_factors_rank_the_root_cause_first(cascade_report):
    factors = cascade_report["contributing_factors"]
    # rate_limit: 0.1 + 0.5 x 1 + 0.4 x 3/5 = 0.84; timeout (position 3 of 5): 0.1 + 0.5 x 0.4
    # + 0.4 x 0.2 = 0.38; the give-up (position 4): 0.1 + 0.5 x 0.2 + 0.4 x 0.2 = 0.28
    assert [(f["factor"], f["likelihood"]) for f in factors] == [
        ("rate_limit", 0.84), ("timeout:web_search", 0.38), ("other", 0.28)]
    assert "started cascade #1 (rate_limit x3 -> timeout (web_search) -> other)" in factors[0]["evidence"]
    recs = cascade_report["recommendations"]
    assert [(r["factor"], r["priority"]) for r in recs] == [
        ("rate_limit", "high"), ("timeout:web_search", "medium"), ("other", "low")]
    assert recs[1]["action"].startswith("For tool web_search: Raise the timeout")


def test_cost_breakdown_and_tool_performance(cascade_report):
    cost = cascade_report["cost_breakdown"]
    assert cost["total_usd"] == 0.006
    assert [(t["event_type"], t["events"], t["cost_usd"]) for t in cost["by_event_type"]] == [
        ("llm_call", 1, 0.006), ("error", 1, 0.0), ("rate_limit", 3, 0.0), ("tool_call", 1, 0.0)]
    assert cost["failed_steps"]["events"] == 5
    assert cascade_report["tool_performance"] == [{
        "tool_name": "web_search", "calls": 1, "failures": 1, "success_rate": 0.0, "p50_ms": 30000.0,
        "p95_ms": 30000.0, "slow_calls": 0,
        "failure_modes": [{"fingerprint": cascade_report["tool_performance"][0]["failure_modes"][0]["fingerprint"],
                           "kind": "timeout", "count": 1, "example": "web_search timed out after 30000 ms"}],
    }]


def test_markdown_has_every_section(cascade_report):
    md = cascade_report["markdown"]
    assert md.startswith("# Postmortem: researcher session rl failed: Rate limiting\n")
    for heading in ("## Summary", "## Timeline", "## Error cascade", "## Cost breakdown",
                    "## Tool performance", "## Contributing factors", "## Recommendations"):
        assert f"\n{heading}\n" in md
    assert "| 6 | +40.000s | tool_call | web_search failed (timeout)" in md
    assert "1. **Rate limiting** (likelihood 0.84)" in md


def test_markdown_tables_name_every_column(cascade_report):
    headers = [line for line in cascade_report["markdown"].splitlines() if line.startswith("| ")
               and line.endswith(" |") and not line[2].isdigit() and "---" not in line]
    assert headers, "no table in the postmortem"
    for header in headers:
        cells = [cell.strip() for cell in header[1:-1].split("|")]
        assert all(cells), f"a column without a name: {header!r}"
    assert "| # | Elapsed | Event | Description | Duration | Flags |" in headers
    assert "| 6 | +40.000s | tool_call | web_search failed (timeout): web_search timed out after " \
           "30000 ms | 30,000 ms | **ERROR** |" in cascade_report["markdown"]


def test_markdown_header_shows_the_severity_reason_and_the_denominator(cascade_report):
    md = cascade_report["markdown"]
    assert "- **Severity:** SEV-1: status error and 5 of 6 events failed (83.33%), at least 25%" in md
    assert "- **Events:** 8 (6 without session start/end); 5 of 6 failed (83.33%)" in md
    assert "   - 3 of 5 errors (60%) were rate_limit" in md


def test_markdown_escapes_user_text(db, pricer):
    ingest_events(db, [{"session_id": "md", "event_type": "error", "timestamp": sc.ts(0),
                        "output_data": {"error": "bad | pipe and [link](http://x) <b>"}}])
    md = postmortem_session(db, "md", pricer=pricer)["markdown"]
    assert "bad \\| pipe and \\[link\\](http://x) \\<b\\>" in md


def test_loop_postmortem_has_no_errors_but_a_factor(db, pricer):
    sc.runaway_loop(db, repeats=7)
    r = postmortem_session(db, "loop", pricer=pricer)
    assert r["severity"] == "none"
    assert r["title"] == "crawler session loop: no errors; Loop: fetch_url repeated 7 times with the same input and identical outputs"
    # 0.5 + 0.05 x (7 - 5)
    assert [(f["factor"], f["likelihood"]) for f in r["contributing_factors"]] == [("loop:fetch_url", 0.6)]
    assert r["recommendations"][0]["priority"] == "high"
    assert r["error_cascade"] == {"total_errors": 0, "cascades": [], "longest": 0, "propagated": False,
                                 "cascades_left_out": 0}


def test_token_spike_postmortem_names_the_anomalies(db, pricer):
    sc.token_spike(db)
    r = postmortem_session(db, "spike", pricer=pricer)
    assert [(f["factor"], f["likelihood"]) for f in r["contributing_factors"]] == [
        ("anomaly:cost_usd", 0.45), ("anomaly:total_tokens", 0.45)]


def test_clean_session_postmortem(db, pricer):
    sc.clean_session(db)
    r = postmortem_session(db, "clean", pricer=pricer)
    assert (r["severity"], r["contributing_factors"], r["recommendations"]) == ("none", [], [])
    assert r["title"] == "summarizer session clean: no errors"
    assert "## Recommendations\n\nNothing to change." in r["markdown"]


def test_errors_far_apart_are_separate_cascades(db, pricer):
    ingest_events(db, [
        {"session_id": "two", "event_type": "tool_call", "timestamp": sc.ts(0),
         "tool_call": {"name": "db", "error": "connection refused"}},
        *[{"session_id": "two", "event_type": "llm_call", "timestamp": sc.ts(1 + i)} for i in range(4)],
        {"session_id": "two", "event_type": "timeout", "timestamp": sc.ts(10)},
        {"session_id": "two", "event_type": "llm_call", "timestamp": sc.ts(11)},
    ])
    cascade = postmortem_session(db, "two", pricer=pricer)["error_cascade"]
    # 4 successful events between the two errors (more than 3): two cascades, both recovered
    assert [(c["length"], c["path"], c["recovered"]) for c in cascade["cascades"]] == [
        (1, "network (db)", True), (1, "timeout", True)]


def test_parent_id_names_the_cause(db, pricer):
    ingest_events(db, [
        {"session_id": "p", "event_id": "a", "event_type": "rate_limit", "timestamp": sc.ts(0)},
        {"session_id": "p", "event_id": "b", "event_type": "timeout", "timestamp": sc.ts(1)},
        {"session_id": "p", "event_id": "c", "event_type": "error", "timestamp": sc.ts(2),
         "parent_id": "a"},
    ])
    [c] = postmortem_session(db, "p", pricer=pricer)["error_cascade"]["cascades"]
    assert [(e["caused_by"], e["relation"]) for e in c["errors"]] == [
        (None, None), ("a", "followed"), ("a", "parent")]


@pytest.mark.parametrize(("status", "errors", "events", "expected"), [
    ("completed", 0, 10, "none"),
    ("error", 0, 10, "none"),       # ended in error without an error event: nothing to write up
    ("error", 5, 20, "SEV-1"),      # 25% and failed
    ("error", 1, 20, "SEV-2"),      # failed
    ("completed", 5, 20, "SEV-2"),  # 25%
    ("completed", 1, 20, "SEV-3"),  # 5%
    ("active", 3, 100, "SEV-3"),    # 3 errors
    ("completed", 2, 100, "SEV-4"),
])
def test_severity_rule(status, errors, events, expected):
    assert severity_for(status, errors, events) == expected


def test_severity_compares_the_rate_as_shown():
    # 2,000 of 8,001 is 24.9969%, shown as 25%: the severity follows what is shown.
    assert severity_for("completed", 2000, 8001) == "SEV-2"
    # Cost: the worse of the two rules.
    assert severity_for("completed", 0, 10, 0.99) == "none"
    assert severity_for("completed", 0, 10, 1.0) == "SEV-4"
    assert severity_for("completed", 0, 10, 7.21) == "SEV-3"
    assert severity_for("completed", 1, 100, 20.0) == "SEV-2"
    assert severity_for("error", 5, 8, 20.0) == "SEV-1"
    assert severity_for("completed", 1999, 8001) == "SEV-3"  # 24.98%


def _session_with(db, sid: str, status: str, errors: int, ok: int, day: int) -> None:
    start = sc.T0 - timedelta(days=day)
    events = [{"session_id": sid, "event_type": "error", "agent_name": "a",
               "timestamp": format_ts(start + timedelta(seconds=i))} for i in range(errors)]
    events += [{"session_id": sid, "event_type": "llm_call", "agent_name": "a",
                "timestamp": format_ts(start + timedelta(seconds=100 + i))} for i in range(ok)]
    events.append({"session_id": sid, "event_type": "session_end", "status": status,
                   "timestamp": format_ts(start + timedelta(seconds=500))})
    ingest_events(db, events)


def test_candidates_sorted_by_severity_then_errors(db):
    _session_with(db, "sev4", "completed", 1, 98, day=1)   # 1/100 -> SEV-4
    _session_with(db, "sev3", "completed", 3, 96, day=2)   # 3/100 -> SEV-3
    _session_with(db, "sev2", "error", 1, 18, day=3)       # failed, 1/20 -> SEV-2
    _session_with(db, "sev2b", "completed", 6, 13, day=4)  # 6/20 -> SEV-2, more errors
    _session_with(db, "sev1", "error", 6, 13, day=5)       # -> SEV-1
    _session_with(db, "clean", "completed", 0, 5, day=6)
    data = postmortem_candidates(db)
    assert [(c["session_id"], c["severity"]) for c in data["candidates"]] == [
        ("sev1", "SEV-1"), ("sev2b", "SEV-2"), ("sev2", "SEV-2"), ("sev3", "SEV-3"), ("sev4", "SEV-4")]
    assert data["total"] == 5
    assert data["candidates"][0] == {
        "session_id": "sev1", "agent_name": "a", "started_at": format_ts(sc.T0 - timedelta(days=5)),
        "status": "error", "event_count": 20, "error_count": 6, "body_events": 19, "error_events": 6,
        "error_event_rate": 31.58, "error_rate": 31.58, "severity": "SEV-1",
        "severity_reason": "status error and 6 of 19 events failed (31.58%), at least 25%"}


def test_candidates_filters(db):
    _session_with(db, "few", "completed", 1, 5, day=1)
    _session_with(db, "many", "completed", 4, 5, day=2)
    assert [c["session_id"] for c in postmortem_candidates(db, min_errors=2)["candidates"]] == ["many"]
    limited = postmortem_candidates(db, limit=1)
    assert (len(limited["candidates"]), limited["total"]) == (1, 2)
    assert postmortem_candidates(db, agent="nobody") == {"candidates": [], "total": 0, "incidents": []}
    # all sessions here started around 2026-03; `days` counts back from now
    assert postmortem_candidates(db, days=1)["total"] == 0


def test_unknown_session_is_not_found(db, pricer):
    with pytest.raises(NotFound):
        postmortem_session(db, "nope", pricer=pricer)


def test_a_severity_reached_by_errors_and_by_cost_gives_both_reasons():
    from obsctl.services.postmortem import severity_and_reason

    assert severity_and_reason("completed", 1, 20, 5.0) == (
        "SEV-3", "1 of 20 events failed (5%), at least 5%; cost $5.00, at least $5")
    assert severity_and_reason("completed", 1, 20, 25.5) == ("SEV-2", "cost $25.50, at least $20")
    assert severity_and_reason("error", 1, 20, 25.5) == ("SEV-2", "status error; 1 of 20 events failed (5%); "
                                                                   "cost $25.50, at least $20")


def test_a_long_sessions_timeline_keeps_its_ends_and_errors(db, pricer, monkeypatch):
    import importlib

    timeline_mod = importlib.import_module("obsctl.services.postmortem.timeline")

    monkeypatch.setattr(timeline_mod, "TIMELINE_EVENTS", 20)
    monkeypatch.setattr(timeline_mod, "TIMELINE_ENDS", 3)
    monkeypatch.setattr(timeline_mod, "TIMELINE_ERRORS", 2)
    ingest_events(db, [event("long", "error" if i in (6, 9, 12) else "llm_call", event_id=f"e{i}",
                             timestamp=f"2026-03-01T10:00:{i:02d}Z") for i in range(30)])
    report = postmortem_session(db, "long", pricer=pricer)
    assert [e["number"] for e in report["timeline"]] == [1, 2, 3, 7, 10, 28, 29, 30]
    assert report["timeline_left_out"] == 22
    markdown = report["markdown"]
    assert "| ... |  |  | 3 events left out |  |  |" in markdown and "| 7 | " in markdown
    assert "Of its 30 events this timeline shows the first and last 3 and the first 2 errors between them; " \
           "22 are left out (the export has every event)." in markdown
