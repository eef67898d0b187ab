"""Stored text never steers an operator's terminal: an agent name, session id, model, tool,
error, rule name or webhook error holding escape sequences (OSC 52 writes the clipboard,
OSC 8 makes a link, ESC[2J clears the screen, U+009B is a one-character CSI) is shown with
its control characters as \\xNN by every command, on a terminal and in piped TSV; JSON keeps
the exact text (JSON-escaped)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from obsctl.cli.base import error, notice
from obsctl.services.ingest import ingest_events
from obsctl.text import visible_text
from obsctl.timeutil import format_ts
from tests.terminal import run_on_terminal

CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: put "echo pwned" on the clipboard
LINK = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"  # OSC 8: a hidden link
CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home
SESSION = f"s-{CLIPBOARD}-1"
AGENT = f"agent{LINK}{CLEAR}\x9b31m"
OTHER = "plain-2"
TOOL = f"tool{CLEAR}"
MODEL = f"model{CLIPBOARD}"
ERROR = f"boom{LINK}"
RULE = f"rule{CLEAR}"
# The sequences that must not reach the terminal raw, and how they are shown instead.
RAW = ("\x1b]52", "\x1b]8", "\x1b[2J", "\x9b", "\x07")
SHOWN = {SESSION: "s-\\x1b]52;c;ZWNobyBwd25lZA==\\x07-1",
         AGENT: "agent\\x1b]8;;https://evil.example/\\x1b\\click\\x1b]8;;\\x1b\\\\x1b[2J\\x1b[H\\x9b31m"}


def _ts(minutes_ago: float) -> str:
    return format_ts(datetime.now(UTC) - timedelta(minutes=minutes_ago))


def _session(db, session_id: str, agent: str) -> None:
    e = {"session_id": session_id}
    ingest_events(db, [
        {**e, "event_type": "session_start", "agent_name": agent, "timestamp": _ts(30),
         "metadata": {"tags": {"team": CLEAR}}},
        {**e, "event_type": "llm_call", "model": MODEL, "tokens_in": 1200, "tokens_out": 300,
         "duration_ms": 900, "timestamp": _ts(29), "input_data": {"prompt": f"find the boom {CLEAR}"}},
        {**e, "event_type": "tool_call", "duration_ms": 50, "timestamp": _ts(28),
         "tool_call": {"name": TOOL, "input": {"q": "x"}, "error": ERROR}},
        {**e, "event_type": "session_end", "status": "error", "timestamp": _ts(27)},
    ])


@pytest.fixture
def hostile(db, cli):
    """Two sessions of a hostile agent (one with a hostile id), an SLA target and an alert
    rule on that agent, a fired alert, and a webhook delivery whose receiver answered with
    escape sequences."""
    _session(db, SESSION, AGENT)
    _session(db, OTHER, AGENT)
    assert cli("sla", "set", AGENT, "error_rate", "<=", "5").exit_code == 0
    assert cli("sla", "check").exit_code == 0
    assert cli("alerts", "rules", "add", "--name", RULE, "--metric", "error_rate", "--operator", ">",
               "--threshold", "1", "--window-minutes", "120", "--agent-filter", AGENT).exit_code == 0
    assert cli("alerts", "evaluate").exit_code == 0
    hook = json.loads(cli("webhooks", "add", "http://8.8.8.8/hook", "--json").stdout)
    with db.transaction():
        db.webhooks.insert_deliveries([{
            "delivery_id": "msg_1", "webhook_id": hook["webhook_id"], "alert_id": None,
            "event_type": "alert.fired", "payload": "{}", "status": "failed", "attempts": 1,
            "last_error": f"HTTP 500: {CLEAR}{CLIPBOARD}", "last_status_code": 500,
            "next_attempt_at": _ts(0), "created_at": _ts(0), "delivered_at": None}])


# (command, a stored value the command shows)
VIEWS = [
    (("sessions", "list"), SESSION),
    (("sessions", "list"), AGENT),
    (("sessions", "show", SESSION), SESSION),
    (("sessions", "show", SESSION), AGENT),
    (("sessions", "show", SESSION, "--tree"), TOOL),
    (("explain", SESSION), AGENT),
    (("triage", "show", SESSION), SESSION),
    (("triage", "show", SESSION), AGENT),
    (("triage", "batch"), SESSION),
    (("postmortem", "show", SESSION), SESSION),
    (("postmortem", "candidates", "--min-errors", "1"), AGENT),
    (("compare", SESSION, OTHER), SESSION),
    (("search", "boom"), SESSION),
    (("search", "boom"), AGENT),
    (("analytics",), AGENT),
    (("incidents",), AGENT),
    (("scorecards",), AGENT),
    (("scorecards", "show", AGENT), AGENT),
    (("sla", "list"), AGENT),
    (("sla", "summary"), AGENT),
    (("alerts", "rules", "list"), RULE),
    (("alerts", "events"), AGENT),
    (("webhooks", "deliveries"), CLEAR),
    (("tail", "--no-follow"), SESSION),
]


def _assert_shown_not_raw(output: str, value: str) -> None:
    for raw in RAW:
        assert raw not in output, (raw, output)
    shown = SHOWN.get(value, visible_text(value))
    # A table may fold a long cell over lines: compare without the folding.
    assert shown in output or shown in "".join(output.split()), (shown, output)


@pytest.mark.sqlite_only  # rendering does not depend on the store
@pytest.mark.parametrize("args, value", VIEWS, ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_stored_escape_sequences_are_shown_not_sent_on_a_terminal(hostile, cli, terminal, args, value):
    result = cli(*args, env={"COLUMNS": "400"})
    assert result.exit_code in (0, 3), result.output  # 3: the triage of a session that failed
    _assert_shown_not_raw(result.stdout, value)


@pytest.mark.sqlite_only
@pytest.mark.parametrize("args, value", [
    (("sessions", "list"), AGENT), (("triage", "batch"), SESSION), (("scorecards",), AGENT),
    (("sla", "list"), AGENT), (("webhooks", "deliveries"), CLEAR), (("tail", "--no-follow"), AGENT),
], ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_piped_rows_show_them_too(hostile, cli, args, value):
    result = cli(*args)
    assert result.exit_code in (0, 3), result.output
    for raw in RAW:
        assert raw not in result.stdout, (raw, result.stdout)
    assert "\\x1b" in result.stdout


@pytest.mark.sqlite_only
def test_json_keeps_the_exact_text(hostile, cli, terminal):
    listed = json.loads(cli("sessions", "list", "--json").stdout)["sessions"]
    assert {(s["session_id"], s["agent_name"]) for s in listed} == {(SESSION, AGENT), (OTHER, AGENT)}


def test_messages_on_stderr_show_them_too(capsys):
    # Errors and notices quote stored data too (a receiver's answer as a delivery's last error).
    error(f"webhook delivery failed: HTTP 410 Gone: {CLEAR}")
    notice(f"webhooks: last error: {CLIPBOARD}")
    stderr = capsys.readouterr().err
    assert not any(raw in stderr for raw in RAW), stderr
    assert "Gone: \\x1b[2J\\x1b[H\n" in stderr and "\\x1b]52;c;ZWNobyBwd25lZA==\\x07" in stderr


@pytest.mark.sqlite_only
@pytest.mark.parametrize("args, value", [(("sessions", "list"), AGENT), (("explain", SESSION), SESSION)])
def test_on_a_real_terminal(hostile, db_url, args, value):
    run = run_on_terminal("--db", db_url, *args, columns=400)
    assert run.exit_code == 0, run.stderr
    assert "\x1b[" in run.raw  # rendered for a terminal, with rich's own styles
    _assert_shown_not_raw(run.raw, value)
