"""What a person at a terminal sees: analytics, compare, sessions list/show, scorecards and
webhooks rendered by the real CLI with its stdout on a pseudo-terminal (rich tables and
panels), each showing the values of a small hand-made fleet."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from obsctl.services.ingest import ingest_events
from obsctl.timeutil import format_ts, now
from tests.terminal import run_on_terminal
from tests.webhook_receiver import Receiver


def fleet(start) -> list[dict]:
    """t1 (alpha, completed): an LLM call of 1200/300 tokens in 100 ms and a 300 ms web search.
    t2 (beta, error): an LLM call of 500/50 tokens in 700 ms and an error."""
    def t(seconds: int) -> str:
        return format_ts(start + timedelta(seconds=seconds))
    return [
        {"event_type": "session_start", "session_id": "t1", "agent_name": "alpha", "timestamp": t(0)},
        {"event_type": "llm_call", "session_id": "t1", "model": "gpt-4o", "tokens_in": 1200,
         "tokens_out": 300, "duration_ms": 100, "timestamp": t(1)},
        {"event_type": "tool_call", "session_id": "t1", "tool_call": {"name": "web_search"},
         "duration_ms": 300, "timestamp": t(2)},
        {"event_type": "session_end", "session_id": "t1", "status": "completed", "timestamp": t(3)},
        {"event_type": "session_start", "session_id": "t2", "agent_name": "beta", "timestamp": t(4)},
        {"event_type": "llm_call", "session_id": "t2", "model": "gpt-4o", "tokens_in": 500,
         "tokens_out": 50, "duration_ms": 700, "timestamp": t(5)},
        {"event_type": "error", "session_id": "t2", "output_data": {"error": "boom"}, "timestamp": t(6)},
        {"event_type": "session_end", "session_id": "t2", "status": "error", "timestamp": t(7)},
    ]


@pytest.fixture
def fleet_db(db, db_url):
    # Two hours ago, so that every window counted back from now (scorecards: 7 days) holds it.
    ingest_events(db, fleet(now() - timedelta(hours=2)))
    return db_url


def terminal(db_path, *args: str, env: dict | None = None) -> str:
    run = run_on_terminal("--db", str(db_path), *args, env=env)
    assert run.exit_code == 0, run.stderr
    assert "\x1b[" in run.raw or "┃" in run.screen  # rendered for a terminal, not as plain text
    assert "\t" not in run.screen
    return run.screen


def row(screen: str, first_cell: str) -> list[str]:
    """The cells of the table row whose first cell is `first_cell`."""
    for line in screen.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row {first_cell!r} in:\n{screen}")


def cells_of(screen: str, text: str) -> list[str]:
    """The cells of the first table row that shows `text`."""
    for line in screen.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]
        if text in cells:
            return cells
    raise AssertionError(f"no row with {text!r} in:\n{screen}")


def number(value: str) -> float:
    """A shown number, with or without thousands separators, sign or percent sign."""
    return float(value.replace(",", "").replace("%", ""))


def test_sessions_list_on_a_terminal(fleet_db):
    screen = terminal(fleet_db, "sessions", "list")
    assert "2 of 2 sessions" in screen
    for session_id, agent, status, events, errors, tokens in (
            ("t1", "alpha", "completed", 4, 0, 1500), ("t2", "beta", "error", 4, 1, 550)):
        cells = row(screen, session_id)
        assert cells[1:3] == [agent, status]
        assert [number(c) for c in cells[4:7]] == [events, errors, tokens]
    # Newest first.
    assert screen.index("│ t2") < screen.index("│ t1")


def test_sessions_show_on_a_terminal(fleet_db):
    screen = terminal(fleet_db, "sessions", "show", "t1")
    assert re.search(r"t1\s+agent alpha\s+completed", screen)
    assert re.search(r"tokens 1,?200 in / 300 out \(1,?500\)\s+events 4\s+errors 0", screen)
    llm, tool = cells_of(screen, "llm_call"), cells_of(screen, "tool_call")
    assert llm[1:3] == ["llm_call", "gpt-4o"] and [number(c) for c in llm[4:7]] == [1200, 300, 100]
    assert tool[1:4] == ["tool_call", "-", "web_search"] and number(tool[6]) == 300  # no model: "-"


def test_analytics_on_a_terminal(fleet_db):
    screen = terminal(fleet_db, "analytics")
    assert re.search(r"sessions 2\s+\(0 active, 1 completed, 1 error\)", screen)
    assert "in error: 1 of 2 sessions (50.00%)" in screen
    assert re.search(r"tokens 2,?050 \(1,?700 in / 350 out, 1,?025 per session\)", screen)
    assert [number(c) for c in row(screen, "alpha")[1:]] == [1, 1500, 1500]
    assert [number(c) for c in row(screen, "beta")[1:]] == [1, 550, 550]
    assert [number(c) for c in row(screen, "gpt-4o")[1:]] == [2, 1700, 350, 400]
    assert [number(row(screen, kind)[1]) for kind in ("llm_call", "error", "tool_call")] == [2, 1, 1]
    assert "sessions per day" in screen and "█" in screen


def test_compare_on_a_terminal(fleet_db):
    screen = terminal(fleet_db, "compare", "t1", "t2")
    assert re.search(r"A = t1\s+B = t2", screen)
    assert row(screen, "agent")[1:3] == ["alpha", "beta"]
    assert row(screen, "status")[1:3] == ["completed", "error"]
    tokens = row(screen, "total tokens")
    assert [number(c) for c in tokens[1:5]] == [1500, 550, -950, -63.33]
    assert [number(c) for c in row(screen, "errors")[1:4]] == [0, 1, 1]
    assert [number(c) for c in row(screen, "processing ms")[1:5]] == [400, 700, 300, 75]
    assert row(screen, "tool")[1:3] == ["web_search", "1"]


def test_scorecards_on_a_terminal(fleet_db):
    screen = terminal(fleet_db, "scorecards")
    assert "scorecards, last 7 days" in screen
    alpha, beta = row(screen, "alpha"), row(screen, "beta")
    # alpha: no errors (reliability 100), fastest (performance 100), one completed session.
    assert alpha[2].startswith("100.00") and alpha[3].startswith("100.00") and alpha[5].startswith("100.00")
    # beta: its only body event besides the call is an error, its session ended in error.
    assert beta[2] == "0.00 F" and beta[5].startswith("50.00")
    assert number(alpha[-1]) == 1 and number(beta[-1]) == 1
    assert screen.index("│ alpha") < screen.index("│ beta")  # best first


def test_scorecard_show_on_a_terminal(fleet_db):
    screen = terminal(fleet_db, "scorecards", "show", "alpha")
    assert re.search(r"alpha\s+overall [0-9.]+ [A-F][+-]?\s+\(1 session, 2 agents in the fleet", screen)
    assert "error events 0 of 2 (0.00%)" in row(screen, "reliability")[3]
    performance = row(screen, "performance")[3]
    assert re.search(r"p50 100(\.0)? ?ms", performance)
    # The fleet's p95 is the median of the agents' p95s: (300 + 700) / 2.
    assert re.search(r"p95 300(\.0)? ?ms \(fleet 500(\.0)? ?ms\)", performance)
    assert "completed 1 of 1 (100.00%)" in row(screen, "throughput")[3]
    assert "daily trend" in screen


def test_webhooks_on_a_terminal(fleet_db):
    receiver = Receiver(mode="gone").start()
    env = {"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}
    try:
        created = terminal(fleet_db, "webhooks", "add", receiver.url, "--format", "slack", env=env)
        assert "webhook created" in created
        webhook_id = next(c for c in created.split() if c.startswith("wh_"))
        listed = terminal(fleet_db, "webhooks", "list", env=env)
        assert "1 webhook" in listed
        assert row(listed, webhook_id)[1:] == [receiver.url, "slack", "*", "yes", "no"]
        run = run_on_terminal("--db", str(fleet_db), "webhooks", "test", webhook_id, env=env)
        assert run.exit_code != 0  # the receiver answered 410 Gone
        deliveries = terminal(fleet_db, "webhooks", "deliveries", env=env)
    finally:
        receiver.stop()
    assert "1 of 1 delivery" in deliveries
    delivery = next(line for line in deliveries.splitlines() if webhook_id in line)
    assert "410" in delivery and "failed" in delivery
