"""Scorecards: letter grades per agent over the last `days` days (DECISIONS: Scorecards).

The window is `[now - days * 24h, now)`; an agent's scorecard covers its sessions whose
`started_at` is in the window and all of their events (lifecycle events left out). Agents
with no session in the window have no scorecard. The formulas are in scorecard_scoring.py.

- `list_scorecards` -> the array, best `overall_score` first (ties by agent name).
- `fleet_window` -> the fleet's totals over a window, which `fleet_scorecards` and
  `agent_scorecard` score as list_scorecards and get_scorecard do, with the window's
  `fleet_regressions` when given: the dashboard keeps one fleet and its regressions for a
  while and answers every scorecard page from them.
- `get_scorecard` -> one agent's scorecard plus `breakdown` (the raw inputs and part
  scores of each dimension), `fleet_agents`, `since`/`until`, and `trend`: one point per
  24-hour day of the window (oldest first) with that day's sessions, body events, error
  events and their error_event_rate (also under the name `error_rate`) and overall score, scored against the whole window's fleet reference (volume reference
  divided by `days`) so that the days are measured with the same yardstick.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from obsctl.errors import NotFound
from obsctl.models.scorecards import DAYS
from obsctl.services.pricing import Pricer, pricer_for
from obsctl.services.rates import percent
from obsctl.services.scorecards.scoring import AgentTotals, fleet_reference, score
from obsctl.store import Store
from obsctl.timeutil import format_ts, now

# DAYS (1-365, default 7) is declared with the scorecard models; the CLI and the routes read it here.


def check_days(days: Any) -> int:
    """`days` as an integer from 1 to 365 (default 7), else InvalidInput."""
    return DAYS.resolve(days)


def _window(days: int, at: datetime | None) -> tuple[datetime, str, str]:
    until = at or now()
    start = until - timedelta(days=days)
    return start, format_ts(start), format_ts(until)


def _collect(store: Store, since: str, until: str, agent: str | None = None) -> dict[Any, AgentTotals]:
    """AgentTotals per agent (agent None) or per day index of one agent; costs are the ones
    stored at ingest."""
    with store.read_snapshot():
        sessions = store.scorecards.session_totals(since, until, agent)
        events = store.scorecards.event_totals(since, until, agent)
        percentiles = store.scorecards.duration_percentiles(since, until, agent,
                                                 {g: row[2] for g, row in events.items()})
    totals = {}
    for group, (count, error_sessions, completed) in sessions.items():
        n_events, n_errors, timed, tokens, cost = events.get(group, (0, 0, 0, 0, None))
        p50, p95 = percentiles.get(group, (None, None))
        totals[group] = AgentTotals(
            sessions=count, error_sessions=error_sessions, completed_sessions=completed,
            events=n_events, error_events=n_errors, timed_events=timed,
            p50_ms=None if p50 is None else float(p50), p95_ms=None if p95 is None else float(p95),
            tokens=tokens, cost=cost,
        )
    return totals


def _card(agent: str, totals: AgentTotals, scored: dict, days: int) -> dict:
    return {"agent": agent, "overall_score": scored["overall_score"], "grade": scored["grade"],
            "dimensions": scored["dimensions"], "sessions_analyzed": totals.sessions,
            "period_days": days}


def open_regressions(store: Store, pricer: Pricer, since: str, until: str,
                     agent: str | None = None) -> dict[str, list[dict]]:
    """{agent: its unacknowledged regressions (services/changes.py) that started in the window}."""
    from obsctl.services.changes import find_changes, is_open_regression

    found: dict[str, list[dict]] = {}
    for change in find_changes(store, pricer, agent=agent, since=since, until=until):
        if is_open_regression(change):
            found.setdefault(change["agent_name"], []).append(change)
    return found


@dataclass(frozen=True)
class FleetWindow:
    """Every agent's totals over one window: what each scorecard is measured against."""

    days: int
    start: datetime
    since: str
    until: str
    totals: dict[str, AgentTotals]


def fleet_window(store: Store, settings, *, days: Any = None, at: datetime | None = None) -> FleetWindow:
    """The fleet's totals over the last `days` days before `at` (default now)."""
    days = check_days(days)
    start, since, until = _window(days, at)
    return FleetWindow(days, start, since, until, _collect(store, since, until))


def list_scorecards(store: Store, settings, *, days: Any = None,
                    at: datetime | None = None) -> list[dict]:
    """Scorecards of every agent with a session in the window, best overall score first."""
    return fleet_scorecards(store, settings, fleet_window(store, settings, days=days, at=at))


def fleet_regressions(store: Store, settings, fleet: FleetWindow) -> dict[str, list[dict]]:
    """Every agent's open regressions in the fleet's window (open_regressions)."""
    return open_regressions(store, pricer_for(settings), fleet.since, fleet.until)


def fleet_scorecards(store: Store, settings, fleet: FleetWindow,
                     regressions: dict[str, list[dict]] | None = None) -> list[dict]:
    """list_scorecards over a fleet already collected, and its regressions when they are
    known (the dashboard keeps both for a while)."""
    ref = fleet_reference(list(fleet.totals.values()))
    if regressions is None:
        regressions = fleet_regressions(store, settings, fleet)
    cards = [_card(agent, t, score(t, ref, regressions.get(agent, [])), fleet.days)
             for agent, t in fleet.totals.items()]
    cards.sort(key=lambda c: (-c["overall_score"], c["agent"]))
    return cards


def no_sessions_message(agent: str, days: int) -> str:
    return f"no sessions of agent {agent!r} started in the last {days} day{'s' if days > 1 else ''}"


def get_scorecard(store: Store, settings, agent: str, *, days: Any = None,
                  at: datetime | None = None) -> dict:
    """One agent's scorecard with its breakdown and daily trend; NotFound when the agent
    has no session in the window."""
    return agent_scorecard(store, settings, agent, fleet_window(store, settings, days=days, at=at))


def agent_scorecard(store: Store, settings, agent: str, fleet: FleetWindow,
                    regressions: dict[str, list[dict]] | None = None) -> dict:
    """get_scorecard over a fleet already collected, and the fleet's regressions when they
    are known (fleet_regressions; the dashboard keeps both for a while)."""
    days, since, until = fleet.days, fleet.since, fleet.until
    if agent not in fleet.totals:
        raise NotFound(no_sessions_message(agent, days))
    pricer = pricer_for(settings)
    ref = fleet_reference(list(fleet.totals.values()))
    totals = fleet.totals[agent]
    if regressions is None:
        regressions = open_regressions(store, pricer, since, until, agent)
    changes = regressions.get(agent, [])
    scored = score(totals, ref, changes)
    card = _card(agent, totals, scored, days)
    card.update(since=since, until=until, fleet_agents=ref.agents, breakdown=scored["breakdown"],
                trend=_trend(store, agent, fleet.start, since, until, days, ref),
                changes=[{"change_id": c["change_id"], "changed_at": c["changed_at"], "title": c["title"],
                          "metrics": c["metrics"]} for c in changes])
    return card


def _trend(store, agent: str, start: datetime, since: str, until: str, days: int, ref) -> list[dict]:
    daily = _collect(store, since, until, agent)
    day_ref = ref.per_day(days)
    points = []
    for i in range(days):
        t = daily.get(i)
        scored = score(t, day_ref) if t else None
        rate = percent(t.error_events, t.events) if t else None
        points.append({
            "day": format_ts(start + timedelta(days=i))[:10],
            "start": format_ts(start + timedelta(days=i)),
            "end": format_ts(start + timedelta(days=i + 1)),
            "sessions": t.sessions if t else 0,
            "body_events": t.events if t else 0,
            "error_events": t.error_events if t else 0,
            "error_event_rate": rate,
            "error_rate": rate,  # the same rate under its DECISIONS name
            "overall_score": scored["overall_score"] if scored else None,
            "grade": scored["grade"] if scored else None,
        })
    return points
