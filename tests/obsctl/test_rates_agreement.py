"""One vocabulary of rates: every view reports the same numbers for the same session or agent.

The bundled demo sample is loaded once per test; each session's event counts and error event
rate are then read through triage, the batch, the postmortem and the candidates list, from
the services, the CLI's --json and the HTTP API, and compared with counts made directly from
the sample file (services/rates.py defines the names).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from obsctl.services.ingest import ingest_events
from obsctl.services.postmortem import postmortem_candidates, postmortem_session
from obsctl.services.pricing import Pricer
from obsctl.services.triage import triage_batch, triage_session
from obsctl.vocabulary import LIFECYCLE_TYPES, is_error_event

ROOT = Path(__file__).resolve().parent.parent.parent
COUNT_NAMES = ("event_count", "error_count", "body_events", "error_events", "error_event_rate")
# Triage's errors finding and the postmortem severity share their thresholds.
SEV_FOR_ERRORS_FINDING = {"critical": {"SEV-1", "SEV-2"}, "warning": {"SEV-3"}, "info": {"SEV-4"},
                          None: {"none"}}


def demo_events() -> list[dict]:
    """The demo sample, shifted to end five minutes ago (what `make demo` loads)."""
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "generate_demo.py"), "--now"],
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def expected_counts(events: list[dict]) -> dict[str, tuple]:
    """Per session, COUNT_NAMES counted straight from the events."""
    counts: dict[str, list[int]] = {}
    for e in events:
        c = counts.setdefault(e["session_id"], [0, 0, 0, 0])
        failed = is_error_event(e["event_type"], e.get("output_data"), e.get("tool_call"))
        c[0] += 1
        c[1] += failed
        if e["event_type"] not in LIFECYCLE_TYPES:
            c[2] += 1
            c[3] += failed
    return {sid: (*c, round(100.0 * c[3] / c[2], 2) if c[2] else 0.0) for sid, c in counts.items()}


def counts_of(view: dict) -> tuple:
    return tuple(view[name] for name in COUNT_NAMES)


@pytest.fixture
def demo(db):
    events = demo_events()
    ingest_events(db, events)
    return expected_counts(events)


@pytest.fixture
def pricer():
    return Pricer()


def test_the_demo_has_sessions_where_the_denominators_differ(demo):
    # The lifecycle events make event_count differ from body_events in every session, and
    # several sessions have errors: the comparisons below are not vacuous.
    assert len(demo) == 12
    assert all(c[0] > c[2] for c in demo.values())
    assert sum(1 for c in demo.values() if c[3]) == 3
    assert demo["research-002"] == (10, 5, 8, 5, 62.5)
    assert demo["code-002"] == (6, 1, 4, 1, 25.0)


def test_services_agree_on_every_session(db, demo, pricer):
    candidates = {c["session_id"]: c for c in
                  postmortem_candidates(db, min_errors=0, limit=100)["candidates"]}
    batch = {r["session_id"]: r for r in
             triage_batch(db, pricer=pricer, limit=100, min_events=0)["reports"]}
    assert set(candidates) == set(batch) == set(demo)
    for sid, expected in demo.items():
        triage = triage_session(db, sid, pricer=pricer)
        report = postmortem_session(db, sid, pricer=pricer)
        views = {"triage": triage["metrics"], "batch": batch[sid]["metrics"],
                 "postmortem": report, "candidates": candidates[sid]}
        assert {name: counts_of(v) for name, v in views.items()} == dict.fromkeys(views, expected), sid
        # The spec's `error_rate` fields are the error event rate.
        assert triage["metrics"]["error_rate"] == candidates[sid]["error_rate"] == expected[4]
        assert report["severity"] == candidates[sid]["severity"]
        assert report["severity_reason"] == candidates[sid]["severity_reason"]
        errors = [f for f in triage["findings"] if f["category"] == "errors"]
        if not errors or errors[0]["evidence"]["failed"] == (triage["status"] == "error"):
            # (triage also calls a session whose last event failed "failed")
            assert report["severity"] in SEV_FOR_ERRORS_FINDING[errors[0]["severity"] if errors else None]


def test_triage_and_postmortem_agree_on_the_sessions_of_the_issue(db, demo, pricer):
    # research-002 read "10 events, 5 errors (62.5%)" in triage and 50.0 in the candidates;
    # code-002 was critical in triage at 25% and SEV-3 at 16.67% in the postmortem.
    rl = postmortem_candidates(db)["candidates"]
    assert [(c["session_id"], c["error_rate"], c["severity"]) for c in rl] == [
        ("research-002", 62.5, "SEV-1"), ("code-002", 25.0, "SEV-2"), ("support-004", 20.0, "SEV-3")]
    triage = triage_session(db, "code-002", pricer=pricer)
    # 83 from its terms, capped at 64.9 (C) by the critical severity: the grade agrees with it.
    assert (triage["health_score"], triage["grade"], triage["severity"]) == (64.9, "C", "critical")
    assert triage["score_penalties"]["severity"] == 18.1
    finding = triage["findings"][0]
    assert finding["title"] == "1 of 4 events failed (25%)"
    assert finding["detail"].endswith("Severity critical because 25% of its events failed, at least 25%.")
    assert postmortem_session(db, "code-002", pricer=pricer)["severity_reason"] == (
        "1 of 4 events failed (25%), at least 25%")


def test_cli_json_and_http_bodies_agree_on_every_session(db, demo, cli, client):
    def both(args: list[str], path: str, method: str = "get") -> list[dict]:
        result = cli(*args, "--json")
        assert result.exit_code == 0, result.output
        response = getattr(client, method)(path)
        assert response.status_code == 200, response.get_json()
        return [json.loads(result.stdout), response.get_json()]

    for body in both(["postmortem", "candidates", "--min-errors", "0", "--limit", "100"],
                     "/postmortem/candidates?min_errors=0&limit=100"):
        assert {c["session_id"]: counts_of(c) for c in body["candidates"]} == demo
        assert all(c["error_rate"] == c["error_event_rate"] for c in body["candidates"])
    for body in both(["triage", "batch", "--limit", "100", "--min-events", "0"],
                     "/triage/batch?limit=100&min_events=0"):
        assert {r["session_id"]: counts_of(r["metrics"]) for r in body["reports"]} == demo
    for sid in ("research-002", "code-002", "support-004", "research-003"):
        for body in both(["triage", sid], f"/triage/{sid}"):
            assert counts_of(body["metrics"]) == demo[sid]
        for body in both(["postmortem", sid], f"/postmortem/{sid}", "post"):
            assert counts_of(body) == demo[sid]
        # event_count and error_count are those of the session summary
        summary = client.get(f"/sessions/{sid}").get_json()
        assert (summary["event_count"], summary["error_count"]) == demo[sid][:2]


def test_text_tables_show_the_same_counts(db, demo, cli):
    def rows(*args: str) -> dict[str, dict]:
        lines = cli(*args).stdout.splitlines()
        header = lines[0].split("\t")
        return {row["session_id"]: row for row in (dict(zip(header, line.split("\t"))) for line in lines[1:])}

    batch = rows("triage", "batch", "--limit", "100", "--min-events", "0")
    candidates = rows("postmortem", "candidates", "--min-errors", "0", "--limit", "100")
    for sid, (_, _, body, errors, rate) in demo.items():
        for row in (batch[sid], candidates[sid]):
            assert (int(row["error_events"]), int(row["body_events"]), float(row["error_event_rate"])) == (
                errors, body, rate)


def agents_of(events: list[dict]) -> dict[str, str]:
    return {e["session_id"]: e["agent_name"] for e in events if e["event_type"] == "session_start"}


def test_agents_agree_across_scorecards_metrics_sla_alerts_and_analytics(db, settings, client):
    from obsctl.services.alerts import evaluate_alerts
    from obsctl.services.alerts.rules import create_rule
    from obsctl.services.analytics import get_analytics
    from obsctl.services.metrics import compute_metric
    from obsctl.services.sla import check_sla, put_target

    events = demo_events()
    ingest_events(db, events)
    sessions, agents = expected_counts(events), agents_of(events)
    per_agent: dict[str, list[int]] = {}
    for sid, (_, _, body, errors, _) in sessions.items():
        totals = per_agent.setdefault(agents[sid], [0, 0])
        totals[0] += body
        totals[1] += errors
    for agent in per_agent:
        put_target(db, {"agent_name": agent, "metric": "error_rate", "operator": "<=", "target_value": 5})
        create_rule(db, {"name": agent, "metric": "error_rate", "operator": ">", "threshold": 1000,
                         "window_minutes": 1440, "agent_filter": agent})
    sla = {r["agent_name"]: r["actual_value"] for r in check_sla(db, settings)["results"]}
    alerts = {r["name"]: r["value"] for r in evaluate_alerts(db, settings)["results"]}

    for agent, (body, errors) in per_agent.items():
        expected = round(100.0 * errors / body, 2)
        card = client.get(f"/scorecards/{agent}").get_json()
        reliability = card["breakdown"]["reliability"]
        assert (reliability["body_events"], reliability["error_events"],
                reliability["error_event_rate"]) == (body, errors, expected), agent
        # the demo's sessions all started today: the last trend point holds them all
        day = card["trend"][-1]
        assert (day["body_events"], day["error_events"], day["error_event_rate"], day["error_rate"]) == (
            body, errors, expected, expected), agent
        # the alert/SLA metric `error_rate` is the same rate over a window, unrounded
        window = compute_metric(db, "error_rate", since="2000-01-01T00:00:00.000Z", agent=agent)
        assert round(window, 2) == round(sla[agent], 2) == round(alerts[agent], 2) == expected, agent

    cards = client.get("/scorecards").get_json()
    details = [client.get(f"/scorecards/{c['agent']}").get_json()["breakdown"]["reliability"]
               for c in cards]
    overview = get_analytics(db)["overview"]
    assert overview == client.get("/analytics").get_json()["overview"]
    error_sessions = sum(d["error_sessions"] for d in details)
    assert (overview["error_sessions"], overview["total_sessions"]) == (
        error_sessions, sum(d["sessions"] for d in details)) == (1, 12)
    # analytics' spec `error_rate` is the error session rate, not an event rate
    assert overview["error_rate"] == overview["error_session_rate"] == round(100.0 * 1 / 12, 2)
    assert overview["total_events"] == sum(c[0] for c in sessions.values())
