"""The agents list (`GET /agents`, `obsctl agents`): every agent with sessions started in the
last `days` UTC days, from the session_stats rollup, so it costs the same at any number of
sessions. Declared as a read in models/sessions.py (AGENTS)."""

from __future__ import annotations

from datetime import timedelta

from obsctl.models.sessions import AGENT_DAYS, AGENTS_LIMIT, AgentList, AgentSummary
from obsctl.store import Store
from obsctl.timeutil import now


def list_agents(store: Store, *, days: int | None = None, limit: int | None = None) -> AgentList:
    """The agents of the window, most sessions first (then by name); `days` (30) and `limit`
    (100) as models/sessions.py's AgentsQuery declares them."""
    days = AGENT_DAYS.resolve(days)
    limit = AGENTS_LIMIT.resolve(limit)
    since_day = (now().date() - timedelta(days=days - 1)).isoformat()
    rows, total = store.sessions.agent_totals(since_day, limit)
    return AgentList(since_day=since_day, days=days, total=total, agents=[_summary(row) for row in rows])


def _summary(row: tuple) -> AgentSummary:
    (name, sessions, active, completed, errors, events, tokens_in, tokens_out, ended, duration_sum,
     first_day, last_day, last_event_at) = row
    return AgentSummary(
        agent_name=name, sessions=int(sessions), active_sessions=int(active),
        completed_sessions=int(completed), error_sessions=int(errors),
        error_session_rate=round(100 * errors / sessions, 2), event_count=int(events),
        total_tokens_in=int(tokens_in), total_tokens_out=int(tokens_out),
        avg_duration_ms=round(duration_sum / ended, 2) if ended else None,
        first_day=first_day, last_day=last_day, last_event_at=last_event_at)
