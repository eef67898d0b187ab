"""The agents list (`obsctl agents`, `GET /agents`): exact totals on hand-built sessions, the
window in whole UTC days, the page, the same document through the API and the CLI, and bad
parameters refused with the messages every other command gives."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from obsctl.services.ingest import ingest_events
from obsctl.services.sessions.agents import list_agents
from tests.conftest import event


def _at(days_ago: int, seconds: int = 0) -> str:
    moment = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=days_ago)
    return (moment + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _session(session_id: str, agent: str, days_ago: int, *, end: str | None, tokens: int = 10,
             seconds: int = 60) -> list[dict]:
    events = [event(session_id, "session_start", agent_name=agent, timestamp=_at(days_ago)),
              event(session_id, model="gpt-4o", tokens_in=tokens, tokens_out=tokens // 2,
                    timestamp=_at(days_ago, 1))]
    if end is not None:
        events.append(event(session_id, "session_end", status=end, timestamp=_at(days_ago, seconds)))
    return events


@pytest.fixture
def fleet(db):
    """alpha: 2 completed (60 s and 120 s) and 1 failed (30 s) today, 1 active 3 days ago;
    beta: 1 completed 40 days ago; gamma: 1 completed yesterday."""
    ingest_events(db, [
        *_session("a1", "alpha", 0, end="completed", tokens=100),
        *_session("a2", "alpha", 0, end="completed", seconds=120),
        *_session("a3", "alpha", 0, end="error", seconds=30),
        *_session("a4", "alpha", 3, end=None),
        *_session("b1", "beta", 40, end="completed"),
        *_session("g1", "gamma", 1, end="completed"),
    ])
    return db


def test_totals_per_agent_most_sessions_first(fleet):
    found = list_agents(fleet)
    assert (found.days, found.total) == (30, 2)
    assert found.since_day == (datetime.now(UTC).date() - timedelta(days=29)).isoformat()
    alpha, gamma = found.agents
    assert (alpha.agent_name, alpha.sessions, alpha.active_sessions, alpha.completed_sessions,
            alpha.error_sessions, alpha.error_session_rate) == ("alpha", 4, 1, 2, 1, 25.0)
    assert alpha.event_count == 3 + 3 + 3 + 2
    assert (alpha.total_tokens_in, alpha.total_tokens_out) == (100 + 10 + 10 + 10, 50 + 5 + 5 + 5)
    assert alpha.avg_duration_ms == (60_000 + 120_000 + 30_000) / 3  # the active one has not ended
    assert (alpha.first_day, alpha.last_day) == (_at(3)[:10], _at(0)[:10])
    assert alpha.last_event_at == _at(0, 120)
    assert (gamma.agent_name, gamma.sessions, gamma.error_session_rate) == ("gamma", 1, 0.0)


def test_the_window_is_whole_days_and_the_page_keeps_the_total(fleet):
    assert [a.agent_name for a in list_agents(fleet, days=1).agents] == ["alpha"]
    assert list_agents(fleet, days=1).agents[0].sessions == 3  # 3 days ago is out
    everyone = list_agents(fleet, days=41)
    assert [a.agent_name for a in everyone.agents] == ["alpha", "beta", "gamma"]  # ties by name
    page = list_agents(fleet, days=41, limit=1)
    assert (page.total, [a.agent_name for a in page.agents]) == (3, ["alpha"])


def test_an_empty_store_lists_no_agent(db):
    found = list_agents(db)
    assert (found.total, found.agents) == (0, [])


def test_the_api_and_the_cli_answer_the_same_document(fleet, client, cli):
    response = client.get("/agents?days=41&limit=2")
    assert response.status_code == 200
    body = response.get_json()
    assert [a["agent_name"] for a in body["agents"]] == ["alpha", "beta"] and body["total"] == 3
    printed = cli("agents", "--days", "41", "--limit", "2", "--json")
    assert printed.exit_code == 0 and json.loads(printed.stdout) == body
    table = cli("agents", "--days", "41").stdout.splitlines()
    assert table[0].split("\t")[:5] == ["agent", "sessions", "active", "completed", "errors"]
    assert table[1].split("\t")[:6] == ["alpha", "4", "1", "2", "1", "25%"]


@pytest.mark.parametrize(("query", "message"), [
    ("days=0", "days must be an integer from 1 to 3650; got 0"),
    ("days=x", "query parameter 'days' must be an integer, got 'x'"),
    ("limit=0", "limit must be an integer from 1 to 1000 (a larger limit counts as 1000); got 0"),
])
def test_bad_parameters_are_a_400(client, query, message):
    response = client.get(f"/agents?{query}")
    assert response.status_code == 400
    assert response.get_json() == {"error": message}


def test_a_larger_limit_counts_as_the_cap(fleet, client):
    assert client.get("/agents?limit=5000").status_code == 200


def test_bad_options_exit_2(cli):
    result = cli("agents", "--days", "4000")
    assert result.exit_code == 2
    assert "Invalid value for '--days': days must be an integer from 1 to 3650; got 4000" in result.stderr
