"""Incidents across sessions, on a hand-made fleet: every count below is worked out by hand
from the events in `fleet`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
import pytest

from obsctl.errors import InvalidInput, NotFound
from obsctl.services.incidents import list_incidents, severity, window
from obsctl.services.ingest import ingest_events
from obsctl.timeutil import format_ts

T0 = datetime(2026, 3, 10, 19, 0, tzinfo=UTC)
SINCE, UNTIL = format_ts(T0), format_ts(T0 + timedelta(hours=3))


def at(minutes: float) -> str:
    return format_ts(T0 + timedelta(minutes=minutes))


def _outage(sid: str, minute: float, n: int) -> dict:
    return {"session_id": sid, "event_type": "tool_call", "timestamp": at(minute), "event_id": f"{sid}-ws-{n}",
            "tool_call": {"name": "web_search", "input": {"q": f"query {n}"},
                          "error": f"HTTP 503 Service Unavailable (request req_{n:04x}a9f)"}}


def _start(sid: str, agent: str, minute: float) -> dict:
    return {"session_id": sid, "event_type": "session_start", "agent_name": agent, "timestamp": at(minute),
            "event_id": f"{sid}-start"}


def _rate_limit(sid: str, seconds: float) -> dict:
    return {"session_id": sid, "event_type": "rate_limit", "model": "claude-3-opus",
            "timestamp": format_ts(T0 + timedelta(hours=2, seconds=seconds)), "event_id": f"{sid}-rl",
            "output_data": {"error": f"429 Too Many Requests: retry after {int(seconds) + 5}s"}}


def fleet(db) -> None:
    """Stories, all between 19:00 and 22:00 UTC:

    - web_search answers HTTP 503 from 19:56 to 20:39: 9 failures in 5 sessions of 3 agents
      (ws-1, ws-2 of research-agent; ws-3, ws-4 of support-bot; ws-5 of planner);
    - 3 sessions of research-agent hit claude-3-opus rate limits within 90 s from 21:00;
    - one session of planner fails 6 times on its own (not an incident);
    - web_search fails again at 21:50, in 2 sessions of support-bot: more than 30 minutes after
      the outage's last failure, so a second incident;
    - healthy sessions of every agent.
    """
    events = [
        _start("ws-1", "research-agent", 55), _outage("ws-1", 56, 1), _outage("ws-1", 58, 2),
        _start("ws-2", "research-agent", 60), _outage("ws-2", 61, 3), _outage("ws-2", 70, 4),
        _start("ws-3", "support-bot", 62), _outage("ws-3", 64, 5),
        _start("ws-4", "support-bot", 75), _outage("ws-4", 76, 6), _outage("ws-4", 80, 7),
        _start("ws-5", "planner", 90), _outage("ws-5", 95, 8), _outage("ws-5", 99, 9),
    ]
    for n, sid in enumerate(("rl-1", "rl-2", "rl-3")):
        events += [_start(sid, "research-agent", 119), _rate_limit(sid, [0, 40, 90][n])]
    events.append(_start("solo", "planner", 10))
    events += [{"session_id": "solo", "event_type": "tool_call", "timestamp": at(11 + i), "event_id": f"solo-{i}",
                "tool_call": {"name": "run_tests", "input": {}, "error": "3 tests failed"}} for i in range(6)]
    events += [_start("late-1", "support-bot", 169), _outage("late-1", 170, 10),
               _start("late-2", "support-bot", 170), _outage("late-2", 171, 11)]
    for n, agent in enumerate(("research-agent", "support-bot", "planner")):
        events += [_start(f"ok-{n}", agent, 30 + n),
                   {"session_id": f"ok-{n}", "event_type": "llm_call", "model": "gpt-4o", "tokens_in": 10,
                    "timestamp": at(31 + n), "event_id": f"ok-{n}-1"}]
    ingest_events(db, events)


@pytest.fixture
def fleet_db(db):
    fleet(db)
    return db


def test_an_outage_across_sessions_is_one_incident(fleet_db):
    result = list_incidents(fleet_db, since=SINCE, until=UNTIL)
    assert (result["total"], result["errors_scanned"], result["truncated"]) == (3, 20, False)
    outage, cascade, late = result["incidents"]
    assert outage["title"] == ("web_search: HTTP 503 Service Unavailable (request req_0001a9f) - 9 failures, "
                               "5 sessions, 3 agents, 19:56-20:39 UTC")
    assert (outage["severity"], outage["severity_reason"]) == ("SEV-1", "3 agents affected, at least 3")
    assert (outage["failures"], outage["sessions"], outage["agents"]) == (9, 5, 3)
    assert outage["session_ids"] == ["ws-1", "ws-2", "ws-3", "ws-4", "ws-5"]
    assert outage["agent_names"] == ["research-agent", "support-bot", "planner"]
    assert (outage["kind"], outage["tool_name"], outage["model"]) == ("server", "web_search", None)
    assert (outage["first_seen"], outage["last_seen"], outage["duration_ms"]) == (at(56), at(99), 43 * 60_000)
    assert outage["incident_id"].startswith("inc-") and len(outage["incident_id"]) == 16


def test_a_rate_limit_cascade_of_one_agent(fleet_db):
    cascade = list_incidents(fleet_db, since=SINCE, until=UNTIL)["incidents"][1]
    assert cascade["title"] == ("claude-3-opus: 429 Too Many Requests: retry after 5s - 3 failures, "
                                "3 sessions of research-agent, 21:00-21:01 UTC")
    assert (cascade["severity"], cascade["kind"], cascade["duration_ms"]) == ("SEV-2", "rate_limit", 90_000)
    assert cascade["severity_reason"] == "3 sessions affected, at least 3"


def test_a_failure_back_after_the_gap_is_a_new_incident(fleet_db):
    late = list_incidents(fleet_db, since=SINCE, until=UNTIL)["incidents"][2]
    assert (late["severity"], late["sessions"], late["first_seen"]) == ("SEV-3", 2, at(170))
    assert late["severity_reason"] == "2 sessions of one agent"
    # With a gap longer than the pause (20:39 to 21:50) the two runs are one incident.
    joined = list_incidents(fleet_db, since=SINCE, until=UNTIL, gap_minutes=90)["incidents"][0]
    assert (joined["failures"], joined["sessions"], joined["last_seen"]) == (11, 7, at(171))


def test_one_session_failing_alone_is_no_incident_unless_asked(fleet_db):
    ids = {i["tool_name"] for i in list_incidents(fleet_db, since=SINCE, until=UNTIL)["incidents"]}
    assert "run_tests" not in ids
    alone = list_incidents(fleet_db, since=SINCE, until=UNTIL, min_sessions=1)
    (solo,) = [i for i in alone["incidents"] if i["tool_name"] == "run_tests"]
    assert (solo["failures"], solo["sessions"], solo["severity"]) == (6, 1, "SEV-3")


def test_the_window_and_the_agent_filter(fleet_db):
    early = list_incidents(fleet_db, since=SINCE, until=at(65))
    (outage,) = early["incidents"]
    assert (outage["failures"], outage["sessions"], outage["agents"]) == (4, 3, 2)
    assert outage["severity"] == "SEV-2"
    support = list_incidents(fleet_db, since=SINCE, until=UNTIL, agent="support-bot")
    assert [(i["failures"], i["sessions"]) for i in support["incidents"]] == [(3, 2), (2, 2)]
    assert list_incidents(fleet_db, since=SINCE, until=UNTIL, limit=1)["total"] == 3


def test_the_same_answer_every_time(fleet_db):
    first = list_incidents(fleet_db, since=SINCE, until=UNTIL)
    assert list_incidents(fleet_db, since=SINCE, until=UNTIL) == first


@pytest.mark.parametrize(("sessions", "agents", "expected"), [
    (2, 1, "SEV-3"), (3, 1, "SEV-2"), (2, 2, "SEV-2"), (10, 1, "SEV-1"), (3, 3, "SEV-1"), (9, 2, "SEV-2")])
def test_severity_rule(sessions, agents, expected):
    assert severity(sessions, agents)[0] == expected


@pytest.mark.parametrize(("since", "until", "message"), [
    ("yesterday", None, "since must be an ISO 8601 time or an age like 24h"),
    ("24h", "soon", "until must be an ISO 8601 time"),
    ("2026-03-11T00:00:00Z", "2026-03-10T00:00:00Z", "must be before until"),
    ("0h", None, "age must look like"),
])
def test_bad_windows_say_why(since, until, message):
    with pytest.raises(InvalidInput, match=message):
        window(since, until)


def test_cli_and_http_give_the_same_document(fleet_db, cli, client):
    result = cli("incidents", "--since", SINCE, "--until", UNTIL, "--json")
    assert result.exit_code == 0, result.output
    body = client.get(f"/incidents?since={SINCE}&until={UNTIL}").get_json()
    assert orjson.loads(result.stdout) == body and body["total"] == 3


def test_cli_table_and_usage_errors(fleet_db, cli):
    table = cli("incidents", "--since", SINCE, "--until", UNTIL)
    lines = table.stdout.splitlines()
    assert lines[0] == "severity\tincident\tid" and lines[1].startswith("SEV-1\tweb_search: HTTP 503")
    assert len(lines) == 4
    bad = cli("incidents", "--since", "yesterday")
    assert bad.exit_code == 2 and "since must be an ISO 8601 time" in bad.stderr
    assert cli("incidents", "--min-sessions", "0").exit_code == 2


def test_http_rejects_bad_parameters(fleet_db, client):
    assert client.get("/incidents?since=yesterday").status_code == 400
    assert client.get("/incidents?gap_minutes=0").status_code == 400


def test_triage_batch_over_a_past_window(fleet_db, cli, client):
    """Replay: the sessions started in a window of history, triaged."""
    from obsctl.services.pricing import Pricer
    from obsctl.services.triage import triage_batch

    pricer = Pricer(None)
    window_until = at(80)  # sessions started before 20:20: ws-1..ws-4 (19:55-20:15), solo, ok-*
    batch = triage_batch(fleet_db, pricer=pricer, limit=100, since=SINCE, until=window_until)
    ids = {r["session_id"] for r in batch["reports"]}
    assert ids == {"ws-1", "ws-2", "ws-3", "ws-4", "solo", "ok-0", "ok-1", "ok-2"} and batch["total"] == 8
    assert triage_batch(fleet_db, pricer=pricer, limit=100, since="30m", until=window_until)["total"] == 4
    assert triage_batch(fleet_db, pricer=pricer, limit=100, until=at(0))["total"] == 0
    body = client.get(f"/triage/batch?limit=100&since={SINCE}&until={window_until}").get_json()
    result = cli("triage", "batch", "--limit", "100", "--since", SINCE, "--until", window_until, "--json")
    assert orjson.loads(result.stdout) == body
    assert cli("triage", "batch", "--since", "yesterday").exit_code == 2


def test_triage_batch_and_postmortem_candidates_show_the_windows_incidents(fleet_db, client):
    from obsctl.services.postmortem import postmortem_candidates
    from obsctl.services.pricing import Pricer
    from obsctl.services.triage import triage_batch

    batch = triage_batch(fleet_db, pricer=Pricer(None), limit=5, since=SINCE, until=UNTIL)
    assert [i["failures"] for i in batch["incidents"]] == [9, 3, 2]
    assert batch["incidents"] == list_incidents(fleet_db, since=SINCE, until=UNTIL, limit=10)["incidents"]
    # Candidates: the last `days` days (the fleet is in March 2026: none of it is that recent).
    assert postmortem_candidates(fleet_db, days=1)["incidents"] == []
    body = client.get(f"/triage/batch?since={SINCE}&until={UNTIL}").get_json()
    assert [i["severity"] for i in body["incidents"]] == ["SEV-1", "SEV-2", "SEV-3"]


def _outage_id(db) -> str:
    return list_incidents(db, since=SINCE, until=UNTIL)["incidents"][0]["incident_id"]


def test_the_postmortem_of_an_incident(fleet_db, tmp_path):
    from obsctl.services.postmortem import postmortem_incident
    from obsctl.services.pricing import Pricer

    pricer = Pricer(None)
    incident_id = _outage_id(fleet_db)
    report = postmortem_incident(fleet_db, incident_id, pricer=pricer, since=SINCE, until=UNTIL)
    assert report["title"].startswith("web_search: HTTP 503") and report["severity"] == "SEV-1"
    assert report["summary"] == ("Upstream server errors in web_search: 9 failures in 5 sessions of 3 agents "
                                 f"from {at(56)} to {at(99)} (43 min). Of its 5 sessions, 0 ended in failure, "
                                 "5 are still active.")
    assert [(i["session_id"], i["agent_name"], i["failures"], i["first_failure"]) for i in report["impact"]] == [
        ("ws-1", "research-agent", 2, at(56)), ("ws-2", "research-agent", 2, at(61)),
        ("ws-3", "support-bot", 1, at(64)), ("ws-4", "support-bot", 2, at(76)), ("ws-5", "planner", 2, at(95))]
    assert [f["timestamp"] for f in report["timeline"]] == [at(m) for m in (56, 58, 61, 64, 70, 76, 80, 95, 99)]
    assert report["timeline"][0]["message"] == "HTTP 503 Service Unavailable (request req_0001a9f)"
    assert (report["root_cause"]["kind"], report["root_cause"]["where"]) == ("server", "web_search")
    assert report["overlapping"] == [] and report["root_cause"]["preceding_changes"] == []
    assert [r["priority"] for r in report["recommendations"]] == ["high", "high"]
    assert "failed for 3 agents at once" in report["recommendations"][1]["action"]
    md = report["markdown"]
    assert md.startswith("# Incident postmortem: web_search: HTTP 503") and "| ws-3 | support-bot |" in md
    # The default window is the last 7 days: this fleet is older, so the id is not found there.
    with pytest.raises(NotFound, match=f"incident '{incident_id}' not found between"):
        postmortem_incident(fleet_db, incident_id, pricer=pricer)
    # The rate-limit cascade overlaps nothing either; it names its model as where.
    cascade = list_incidents(fleet_db, since=SINCE, until=UNTIL)["incidents"][1]
    other = postmortem_incident(fleet_db, cascade["incident_id"], pricer=pricer, since=SINCE, until=UNTIL)
    assert other["root_cause"]["where"] == "claude-3-opus" and len(other["timeline"]) == 3


def test_the_incident_postmortem_on_the_command_line_and_http(fleet_db, cli, client):
    incident_id = _outage_id(fleet_db)
    args = ("postmortem", "incident", incident_id, "--since", SINCE, "--until", UNTIL)
    md = cli(*args)
    assert md.exit_code == 0 and md.stdout.startswith("# Incident postmortem: web_search: HTTP 503")
    body = client.get(f"/postmortem/incidents/{incident_id}?since={SINCE}&until={UNTIL}").get_json()
    assert {k: v for k, v in orjson.loads(cli(*args, "--json").stdout).items() if k != "generated_at"} == {
        k: v for k, v in body.items() if k != "generated_at"}
    missing = cli("postmortem", "incident", "inc-000000000000", "--since", SINCE, "--until", UNTIL)
    assert missing.exit_code == 1 and "incident 'inc-000000000000' not found" in missing.stderr
    assert client.get(f"/postmortem/incidents/inc-000000000000?since={SINCE}&until={UNTIL}").status_code == 404
    assert client.get(f"/postmortem/incidents/{incident_id}?since=yesterday").status_code == 400
