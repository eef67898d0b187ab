"""`obsctl agents`: every agent with sessions in the window (services/sessions/agents.py)."""

from __future__ import annotations

import typer

from obsctl.cli.base import run, translate_errors
from obsctl.cli.options import int_option
from obsctl.cli.output import JsonFlag, Styled, fmt_number, render_table, show
from obsctl.models.sessions import AGENT_DAYS, AGENTS_LIMIT, AgentList
from obsctl.services.sessions.agents import list_agents


@translate_errors
def agents_command(
    ctx: typer.Context,
    days: int = int_option(AGENT_DAYS, "--days", help="Sessions started in the last DAYS days (UTC), today included."),
    limit: int = int_option(AGENTS_LIMIT, "--limit", help="Agents to show, most sessions first."),
    json_: JsonFlag = False,
) -> None:
    """List the agents with sessions started in the last --days days: sessions by status,
    error rate, events, tokens, mean duration and latest event; most sessions first.

    Example: obsctl agents --days 7
    """
    show(run(ctx, list_agents, days=days, limit=limit), json_, _show)


def _show(data: AgentList) -> None:
    rows = [[a.agent_name, a.sessions, a.active_sessions, a.completed_sessions,
             Styled(fmt_number(a.error_sessions), "red") if a.error_sessions else a.error_sessions,
             f"{fmt_number(a.error_session_rate)}%", a.event_count, a.total_tokens_in + a.total_tokens_out,
             a.avg_duration_ms, a.last_event_at] for a in data.agents]
    shown = f"{len(data.agents)} of {data.total}" if len(data.agents) < data.total else f"{data.total}"
    render_table(f"{shown} agent{'' if data.total == 1 else 's'} with sessions since {data.since_day}",
                 ["agent", "sessions", "active", "completed", "errors", "error rate", "events", "tokens",
                  "mean ms", "latest event"], rows)
