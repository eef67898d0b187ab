"""Root causes ranked by cause, not by the last symptom: a loop the agent gave up on is the
finding that explains the failure, above the terminal "max iterations" error."""

from __future__ import annotations

import pytest

from obsctl.services.postmortem import postmortem_session
from obsctl.services.triage import triage_session
from tests import triage_scenarios as sc


@pytest.fixture
def pricer(tmp_path):
    return sc.pricer(tmp_path)


def test_a_loop_the_agent_gave_up_on_is_the_top_finding(db, pricer):
    sc.gave_up_after_a_loop(db)
    report = triage_session(db, "maxiter", pricer=pricer)
    first, second = report["findings"][:2]
    assert first["category"] == "loop" and first["severity"] == "critical"
    assert first["title"] == ("Loop: run_tests called 8 times in a row with the same input and identical "
                              "outputs, then the agent gave up (Max iterations (10) reached)")
    assert "all 8 outputs were identical" in first["detail"]
    assert first["evidence"]["caused_failure"] is True and first["evidence"]["identical_outputs"] is True
    assert second["category"] == "errors"
    title = postmortem_session(db, "maxiter", pricer=pricer)["title"]
    assert title == ("coder session maxiter failed: Loop: run_tests repeated 8 times with the same input and "
                     "identical outputs, then the agent gave up")


def test_a_loop_before_a_real_error_is_not_called_the_cause(db, pricer):
    sc.rate_limit_cascade(db)  # its errors are rate limits and a timeout, then "gave up"
    report = triage_session(db, "rl", pricer=pricer)
    assert not any(f["evidence"].get("caused_failure") for f in report["findings"])
    assert report["findings"][0]["category"] == "errors"


def test_rate_limits_at_a_steady_pace_are_told_to_back_off(db, pricer):
    from obsctl.services.ingest import ingest_events

    events = [{"session_id": "flat", "event_type": "session_start", "agent_name": "r", "timestamp": sc.ts(0)}]
    events += [{"session_id": "flat", "event_type": "rate_limit", "model": "gpt-4o", "timestamp": sc.ts(1 + 2 * i),
                "output_data": {"error": "429 Too Many Requests"}} for i in range(4)]
    ingest_events(db, events)
    report = triage_session(db, "flat", pricer=pricer)
    (errors,) = [f for f in report["findings"] if f["category"] == "errors" and "failed" in f["title"]]
    assert errors["suggestion"].startswith("Back off exponentially")


def _fallback_session(db, sid: str, instead: str | None) -> None:
    """web_search answers HTTP 503 twice; after each failure the agent calls `instead` (which
    succeeds), or web_search again when `instead` is None."""
    from obsctl.services.ingest import ingest_events

    events = [{"session_id": sid, "event_type": "session_start", "agent_name": "researcher",
               "timestamp": sc.ts(0), "event_id": f"{sid}-0"}]
    for n in range(2):
        events.append({"session_id": sid, "event_type": "tool_call", "timestamp": sc.ts(10 * n + 1),
                       "event_id": f"{sid}-f{n}", "tool_call": {"name": "web_search", "input": {"q": n},
                                                                "error": "HTTP 503 Service Unavailable"}})
        events.append({"session_id": sid, "event_type": "tool_call", "timestamp": sc.ts(10 * n + 2),
                       "event_id": f"{sid}-ok{n}",
                       "tool_call": {"name": instead or "web_search", "input": {"q": n}, "output": "3 results"}})
    events.append({"session_id": sid, "event_type": "session_end", "status": "completed",
                   "timestamp": sc.ts(30), "event_id": f"{sid}-end"})
    ingest_events(db, events)


def test_a_fallback_already_in_place_is_not_recommended(db, pricer):
    _fallback_session(db, "fb", "bing_search")
    report = triage_session(db, "fb", pricer=pricer)
    suggestions = {f["category"]: f["suggestion"] for f in report["findings"] if f["category"] in ("errors", "tools")}
    expected = ("The agent already falls back when this fails (web_search -> bing_search): add a circuit "
                "breaker so it goes straight to the fallback while web_search keeps failing, and alert on "
                "how often the fallback is used.")
    assert suggestions == {"errors": expected, "tools": expected}
    # Retrying the same tool is no fallback: the usual advice stays.
    _fallback_session(db, "retry", None)
    again = triage_session(db, "retry", pricer=pricer)
    assert "give the agent a fallback path" in again["findings"][0]["suggestion"]
