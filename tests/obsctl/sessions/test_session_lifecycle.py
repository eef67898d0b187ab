"""Idle sessions are completed (obsctl/services/sessions/lifecycle.py): OTLP sessions once
their root span has ended, /events sessions that never got a session_end; by the service,
`alerts evaluate`, `prune` and a real `obsctl serve`'s background sweep."""

import json
import time
from datetime import UTC, datetime, timedelta

import orjson
import pytest
import requests

from obsctl.config import DEFAULT_SESSION_IDLE_TIMEOUT, Settings, parse_idle_timeout
from obsctl.errors import InvalidInput
from obsctl.services.analytics import get_analytics
from obsctl.services.ingest import ingest_events
from obsctl.services.otlp import ingest_otlp
from obsctl.services.sessions import get_session, list_sessions
from obsctl.services.sessions.lifecycle import complete_idle_sessions
from obsctl.timeutil import format_ts
from tests.otlp_support import MS, TRACE, request, span

IDLE = timedelta(minutes=30)
HOUR_AGO = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
ROOT, CHILD = "00f067aa0ba902b7", "53995c3f42cd8ad8"


def idle_now() -> datetime:
    """A sweep's moment once what was just sent has been idle for IDLE on the server's clock."""
    return datetime.now(UTC) + IDLE + timedelta(seconds=5)


def ns(moment: datetime) -> int:
    return int(moment.timestamp()) * 1_000_000_000


def send(store, *spans):
    assert ingest_otlp(store, orjson.dumps(request(*spans)), "json").rejected_spans == 0


def agent_run(start: datetime, *, root: bool = True, status: dict | None = None, trace: str = TRACE):
    """An invoke_agent root span (10 s) around a chat span, in session `conv`."""
    spans = [span(CHILD, trace=trace, parent=ROOT, start=ns(start) + 1000 * MS, duration_ms=2000,
                  attrs={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                         "gen_ai.conversation.id": "conv", "gen_ai.usage.input_tokens": 10})]
    if root:
        spans.append(span(ROOT, trace=trace, start=ns(start), duration_ms=10_000, status=status,
                          attrs={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner",
                                 "gen_ai.conversation.id": "conv"}))
    return spans


def test_an_ended_agent_run_idle_for_the_timeout_is_completed(store):
    send(store, *agent_run(HOUR_AGO))
    assert complete_idle_sessions(store, IDLE) == 0  # it was received just now
    assert complete_idle_sessions(store, IDLE, at=idle_now()) == 1
    session = get_session(store, "conv")
    assert session["status"] == "completed"
    assert session["ended_at"] == format_ts(HOUR_AGO + timedelta(seconds=10))
    assert session["agent_name"] == "planner"
    assert complete_idle_sessions(store, IDLE, at=idle_now()) == 0  # a second sweep (another server)


def test_a_failed_root_span_completes_the_session_as_error(store):
    send(store, *agent_run(HOUR_AGO, status={"code": 2, "message": "agent crashed"}))
    complete_idle_sessions(store, IDLE, at=idle_now())
    assert get_session(store, "conv")["status"] == "error"


def test_a_run_whose_root_span_has_not_arrived_stays_active(store):
    send(store, *agent_run(HOUR_AGO, root=False))
    assert complete_idle_sessions(store, IDLE, at=idle_now()) == 0
    assert get_session(store, "conv")["status"] == "active"


def test_a_session_idle_for_less_than_the_timeout_stays_active(store):
    send(store, *agent_run(datetime.now(UTC) - timedelta(minutes=10)))
    in_six_minutes = datetime.now(UTC) + timedelta(minutes=6)
    assert complete_idle_sessions(store, IDLE, at=in_six_minutes) == 0  # the run ended 10 minutes ago
    assert complete_idle_sessions(store, timedelta(minutes=5)) == 0  # received just now
    assert complete_idle_sessions(store, timedelta(minutes=5), at=in_six_minutes) == 1


def test_events_sessions_without_session_end_complete_and_ended_ones_keep_their_end(store):
    ts = format_ts(HOUR_AGO)
    ingest_events(store, [
        {"session_id": "api", "event_type": "llm_call", "timestamp": ts, "duration_ms": 1500},
        {"session_id": "ended", "event_type": "llm_call", "timestamp": ts},
        {"session_id": "ended", "event_type": "session_end", "timestamp": ts, "status": "error"},
    ])
    assert complete_idle_sessions(store, IDLE, at=idle_now()) == 1
    api = get_session(store, "api")
    assert (api["status"], api["ended_at"]) == ("completed", format_ts(HOUR_AGO + timedelta(seconds=1.5)))
    assert get_session(store, "ended")["status"] == "error"


def test_the_sweep_goes_through_every_page(store):
    ingest_events(store, [
        {"session_id": f"s{i}", "event_type": "step", "timestamp": format_ts(HOUR_AGO + timedelta(seconds=i % 3))}
        for i in range(7)])
    assert complete_idle_sessions(store, IDLE, at=idle_now(), page_size=2) == 7
    assert list_sessions(store, status="completed", limit=50, offset=0)["total"] == 7


def test_no_timeout_never_completes(store):
    send(store, *agent_run(HOUR_AGO))
    assert complete_idle_sessions(store, None) == 0
    assert get_session(store, "conv")["status"] == "active"


def test_an_event_after_the_idle_completion_is_kept_and_reopens_the_session(store):
    send(store, *agent_run(HOUR_AGO))
    complete_idle_sessions(store, IDLE, at=idle_now())
    later = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
    send(store, *agent_run(later, trace="4bf92f3577b34da6a3ce929d0e0e4736"))  # the next turn
    session = get_session(store, "conv")
    assert (session["status"], session["ended_at"]) == ("active", None)
    assert len(session["events"]) == 4 and session["total_tokens_in"] == 20
    assert complete_idle_sessions(store, IDLE) == 0
    assert complete_idle_sessions(store, IDLE, at=later + timedelta(hours=1)) == 1
    assert get_session(store, "conv")["ended_at"] == format_ts(later + timedelta(seconds=10))


def test_a_late_event_reopens_the_session_until_it_is_idle_on_the_server_clock_too(store):
    send(store, *agent_run(HOUR_AGO))
    complete_idle_sessions(store, IDLE, at=idle_now())
    # A span of the same run exported late: its timestamp is an hour old, but it just arrived.
    send(store, span("1a2b3c4d5e6f7a8b", parent=ROOT, start=ns(HOUR_AGO) + 3000 * MS,
                     attrs={"gen_ai.conversation.id": "conv", "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": "search"}))
    assert get_session(store, "conv")["status"] == "active"
    assert complete_idle_sessions(store, IDLE) == 0
    assert complete_idle_sessions(store, IDLE, at=idle_now()) == 1
    session = get_session(store, "conv")
    assert (session["status"], len(session["events"])) == ("completed", 3)


def test_a_session_end_after_the_idle_completion_is_final(store):
    ingest_events(store, [{"session_id": "api", "event_type": "step", "timestamp": format_ts(HOUR_AGO)}])
    complete_idle_sessions(store, IDLE, at=idle_now())
    end = format_ts(HOUR_AGO + timedelta(minutes=50))
    ingest_events(store, [{"session_id": "api", "event_type": "session_end", "timestamp": end,
                           "status": "error"}])
    session = get_session(store, "api")
    assert (session["status"], session["ended_at"]) == ("error", end)
    ingest_events(store, [{"session_id": "api", "event_type": "late", "timestamp": end}])
    assert get_session(store, "api")["status"] == "error"  # only idle completions reopen


def test_rollups_stay_exact_when_sessions_change_status(store, db):
    ingest_events(store, [
        {"session_id": f"s{i}", "agent_name": "a", "event_type": "llm_call", "tokens_in": i,
         "timestamp": format_ts(HOUR_AGO + timedelta(seconds=i)), "duration_ms": 1000}
        for i in range(5)])
    complete_idle_sessions(store, IDLE, at=idle_now())
    ingest_events(store, [{"session_id": "s0", "event_type": "llm_call", "timestamp": format_ts(HOUR_AGO)}])
    overview = get_analytics(store)["overview"]
    counts = dict(db.conn.execute("SELECT status, COUNT(*) FROM sessions GROUP BY status").fetchall())
    assert counts == {"active": 1, "completed": 4}
    assert (overview["active_sessions"], overview["completed_sessions"]) == (1, 4)
    assert list_sessions(store, status="completed", limit=50, offset=0)["total"] == 4
    duration = get_analytics(store)["duration"]
    assert (duration["min_ms"], duration["max_ms"]) == (1000, 1000)


@pytest.mark.sqlite_only
def test_the_sweep_reads_the_active_sessions_on_their_index(db):
    from obsctl.store.sqlite import sessions

    sql = []
    db.conn.set_trace_callback(sql.append)
    sessions.idle_candidates(db, "z", None, 10)
    db.conn.set_trace_callback(None)
    plan = " ".join(str(r) for r in db.conn.execute("EXPLAIN QUERY PLAN " + sql[-1]).fetchall())
    assert "idx_sessions_active_last_event" in plan and "TEMP B-TREE" not in plan


@pytest.mark.parametrize("text, expected", [
    (None, DEFAULT_SESSION_IDLE_TIMEOUT), ("", DEFAULT_SESSION_IDLE_TIMEOUT), ("1", timedelta(seconds=1)),
    ("90s", timedelta(seconds=90)), ("2h", timedelta(hours=2)), ("0", None), ("off", None), ("OFF", None),
])
def test_idle_timeout_setting(text, expected):
    assert parse_idle_timeout(text) == expected
    env = {} if text is None else {"OBSCTL_SESSION_IDLE_TIMEOUT": text}
    assert Settings.from_env(env).session_idle_timeout == expected


@pytest.mark.parametrize("text", ["soon", "-5", "1.5h", "40000d"])
def test_bad_idle_timeout_is_refused(text):
    with pytest.raises(InvalidInput, match="OBSCTL_SESSION_IDLE_TIMEOUT"):
        parse_idle_timeout(text)


def test_alerts_evaluate_completes_idle_sessions(store, cli):
    send(store, *agent_run(HOUR_AGO))
    time.sleep(1.1)  # idle for a second on the server's clock too
    result = cli("alerts", "evaluate", "--json", env={"OBSCTL_SESSION_IDLE_TIMEOUT": "off"})
    assert result.exit_code == 0 and get_session(store, "conv")["status"] == "active"
    result = cli("alerts", "evaluate", "--json", env={"OBSCTL_SESSION_IDLE_TIMEOUT": "1"})
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["evaluated"] == 0
    assert get_session(store, "conv")["status"] == "completed"


def test_prune_completes_idle_sessions(store, cli):
    send(store, *agent_run(HOUR_AGO))
    time.sleep(1.1)
    result = cli("prune", "--older-than", "30d", "--dry-run", env={"OBSCTL_SESSION_IDLE_TIMEOUT": "1"})
    assert result.exit_code == 0 and get_session(store, "conv")["status"] == "active"
    result = cli("prune", "--older-than", "30d", env={"OBSCTL_SESSION_IDLE_TIMEOUT": "1"})
    assert result.exit_code == 0, result.output
    assert get_session(store, "conv")["status"] == "completed"


@pytest.mark.e2e
def test_serve_completes_an_idle_otlp_session_and_reopens_it(live_server):
    server = live_server({"OBSCTL_SESSION_IDLE_TIMEOUT": "1"})
    now = datetime.now(UTC).replace(microsecond=0)

    def post(*spans):
        answer = requests.post(f"{server.url}/v1/traces", data=orjson.dumps(request(*spans)),
                               headers={"Content-Type": "application/json"}, timeout=10)
        assert answer.status_code == 200

    def status():
        return requests.get(f"{server.url}/sessions/conv", timeout=10).json()

    def wait_for(wanted):
        deadline = time.monotonic() + 15
        while (body := status())["status"] != wanted and time.monotonic() < deadline:
            time.sleep(0.2)
        return body

    post(*agent_run(now - timedelta(seconds=12), root=False))  # the run is still going
    time.sleep(2.5)
    assert status()["status"] == "active"
    post(*agent_run(now - timedelta(seconds=12))[1:])  # its root span ends, and is exported
    body = wait_for("completed")
    assert body["status"] == "completed" and body["ended_at"] == format_ts(now - timedelta(seconds=2))
    # The next turn, ending a second from now.
    post(*agent_run(datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=9),
                    trace="4bf92f3577b34da6a3ce929d0e0e4736"))
    assert status()["status"] == "active"
    assert wait_for("completed")["status"] == "completed"
    assert len(status()["events"]) == 4
