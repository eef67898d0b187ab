"""The six stories of tests/fleet_stories.py, each found the way an on-call engineer needs it:
one incident for what crosses sessions, the right cause first for what happens in one, and not
a word about the healthy sessions."""

from __future__ import annotations

from datetime import timedelta

import pytest

from obsctl.services.changes import list_changes
from obsctl.services.incidents import list_incidents
from obsctl.services.ingest import ingest_events
from obsctl.services.postmortem import postmortem_session
from obsctl.services.pricing import Pricer
from obsctl.services.triage import triage_session
from tests import fleet_stories as stories

DAY3 = stories.T0 + timedelta(days=2)


@pytest.fixture
def pricer(tmp_path):
    return Pricer(stories.write_prices(tmp_path))


@pytest.fixture
def fleet(db):
    generated = stories.generate(seed=7)
    ingest_events(db, generated.events)
    return db, generated


def test_the_generator_is_seeded():
    assert stories.generate(seed=7).events == stories.generate(seed=7).events
    assert stories.generate(seed=7).events != stories.generate(seed=8).events


def test_the_outage_is_one_incident(fleet):
    db, truth = fleet
    window = dict(since=stories.ts(DAY3 + timedelta(hours=19)), until=stories.ts(DAY3 + timedelta(hours=22)))
    (outage,) = list_incidents(db, **window)["incidents"]
    assert outage["title"] == ("web_search: HTTP 503 Service Unavailable (request req_0001a9f) - 9 failures, "
                               "5 sessions, 3 agents, 19:56-20:39 UTC")
    assert (outage["severity"], outage["kind"]) == ("SEV-1", "server")
    assert outage["session_ids"] == truth.outage
    # Over the three days it is still one incident, and the only one of web_search.
    everything = list_incidents(db, since=stories.ts(stories.T0), until=stories.ts(DAY3 + timedelta(days=1)))
    assert [i["tool_name"] for i in everything["incidents"]].count("web_search") == 1


def test_the_rate_limit_cascade_is_one_incident(fleet):
    db, truth = fleet
    at = stories.CASCADE_AT
    (cascade,) = list_incidents(db, since=stories.ts(at - timedelta(hours=1)),
                                until=stories.ts(at + timedelta(hours=1)))["incidents"]
    assert cascade["title"] == ("gpt-4o-mini: 429 Too Many Requests: retry after 5s - 3 failures, "
                                "3 sessions of support-bot, 21:00-21:01 UTC")
    assert (cascade["severity"], cascade["kind"], cascade["session_ids"]) == ("SEV-2", "rate_limit", truth.cascade)


def test_the_loop_is_the_cause_of_the_failure(fleet, pricer):
    db, truth = fleet
    report = triage_session(db, truth.loop, pricer=pricer)
    first = report["findings"][0]
    assert (first["category"], first["severity"], first["evidence"]["caused_failure"]) == ("loop", "critical", True)
    assert first["title"] == ("Loop: run_tests called 8 times in a row with the same input and identical outputs, "
                              "then the agent gave up (Max iterations (10) reached)")
    assert postmortem_session(db, truth.loop, pricer=pricer)["title"].endswith(
        "Loop: run_tests repeated 8 times with the same input and identical outputs, then the agent gave up")


def test_the_model_change_is_named_and_stays_out_of_the_baseline(fleet, pricer):
    db, truth = fleet
    changes = list_changes(db, pricer=pricer, since=stories.ts(stories.T0),
                           until=stories.ts(DAY3 + timedelta(days=1)), agent="planner")["changes"]
    (change,) = changes
    assert (change["from"]["model"], change["to"]["model"], change["status"]) == (
        "claude-3-haiku", "claude-3-opus", "regression")
    assert change["first_session_id"] == truth.after_change[0]
    assert change["after"]["sessions"] == len(truth.after_change) + 1  # and ws-5, of the outage
    assert change["metrics"]["llm_p50_ms"] == change["metrics"]["cost_per_session_usd"] == "regression"
    assert change["after"]["llm_p50_ms"] / change["before"]["llm_p50_ms"] > 7
    # The last opus session is still judged against haiku, and the change comes first.
    report = triage_session(db, truth.after_change[-1], pricer=pricer)
    assert report["baseline"]["basis"] == "before_change"
    assert report["findings"][0]["category"] == "change"
    assert report["findings"][0]["title"].startswith(f"Changed at {change['changed_at']}: model claude-3-haiku -> "
                                                     "claude-3-opus")
    assert any(f["category"] == "latency" for f in report["findings"])


def test_the_cost_blow_up_names_the_model(fleet, pricer):
    db, truth = fleet
    report = triage_session(db, truth.expensive, pricer=pricer)
    assert report["severity"] == "critical"
    (cost,) = [f for f in report["findings"] if f["category"] == "cost"]
    assert cost["title"].startswith("Cost $7.20, ")
    assert cost["detail"].startswith("o1-preview: $7.20, 100.0% of the cost, on an agent that usually runs "
                                     "claude-3-5-sonnet.")
    # The model it switched to is the cause, named first (provisional: one session ran it).
    first = report["findings"][0]
    assert first["category"] == "change" and "claude-3-5-sonnet -> o1-preview" in first["title"]
    assert "provisional" in first["detail"]
    postmortem = postmortem_session(db, truth.expensive, pricer=pricer)
    assert "o1-preview: $7.20" in postmortem["summary"]
    # No event failed, but $7.20 is past the $5 threshold: SEV-3, and the reason names the model.
    assert postmortem["severity"] == "SEV-3"
    assert postmortem["severity_reason"].startswith("cost $7.20 (o1-preview: $7.20, 100.0% of the cost, on an "
                                                    "agent that usually runs claude-3-5-sonnet), at least $5")


def test_no_finding_on_a_healthy_session(fleet, pricer):
    db, truth = fleet
    assert len(truth.healthy) >= 50
    noisy = {}
    for sid in truth.healthy:
        findings = triage_session(db, sid, pricer=pricer)["findings"]
        if findings:
            noisy[sid] = [f["title"] for f in findings]
    assert noisy == {}


def test_postmortem_candidates_list_the_cost_blow_up(db, tmp_path):
    from obsctl.services.postmortem import postmortem_candidates

    db.prices_path, db.pricer = stories.write_prices(tmp_path), None  # costs stored at ingest
    generated = stories.generate(seed=7)
    ingest_events(db, generated.events)
    candidates = postmortem_candidates(db, limit=100)["candidates"]
    (expensive,) = [c for c in candidates if c["session_id"] == generated.expensive]
    # No event failed, yet it is listed, ranked by its cost: $7.20 is SEV-3 ($5 or more).
    assert (expensive["error_events"], expensive["severity"]) == (0, "SEV-3")
    assert expensive["severity_reason"] == "cost $7.20, at least $5"
    # Only the cost lets a session without errors in.
    assert all(c["error_events"] > 0 for c in candidates if c["session_id"] != generated.expensive)
    assert [c["session_id"] for c in postmortem_candidates(db, limit=100, min_errors=0)["candidates"]].count(
        generated.expensive) == 1
