"""Scorecard formulas: pure functions from an agent's window totals to its scores.

Every score is 0-100 and is reported rounded to two decimals; a grade is chosen on the
score as reported (DECISIONS: >=95 A+, >=90 A, >=85 B+, >=80 B, >=70 B-, >=65 C+, >=60 C,
>=50 D, else F).

- reliability = mean of
    event part   = max(0, 100 - 5 * error_event_rate)   (an agent with no body events: 100)
    session part = 100 - error_session_rate
  (error_event_rate: percent of the body events, all but session_start/session_end, that are
  errors; error_session_rate: percent of the sessions whose status is `error`; see rates.py)
- performance = mean of ratio(p50 duration, fleet p50) and ratio(p95 duration, fleet p95)
- efficiency  = mean of ratio(tokens per session, fleet value) and ratio(cost per session,
  fleet value); the cost part is left out when none of the agent's events is priced
- throughput  = mean of
    volume part     = min(100, 100 * sessions / fleet sessions)
    completion part = share of sessions whose status is `completed`, in %
- overall     = mean of the four dimension scores as reported

An unacknowledged regression of the agent's configuration that started in the window
(services/changes.py) adds one part to the dimension it made worse, measured against the
agent's own sessions before the change: ratio(LLM p50 after, before) to performance,
ratio(cost per session after, before) to efficiency, 100 - 5 x the error-rate points it added
to reliability (`change_score` in the breakdown; the worst change per dimension).

ratio(value, reference) = 100 when value <= reference, else 100 * reference / value: as good
as the fleet or better scores 100, twice the fleet's latency (or tokens, or cost) scores 50.
A part whose value is unknown (no timed events, nothing priced) is left out; a dimension
with every part left out scores 100 (nothing worse than the fleet was observed).

The fleet value of each input is the median over the agents in the same window of their own
values (the typical agent), so that one very busy agent does not set the bar for the rest.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from obsctl.models.scorecards import DIMENSIONS
from obsctl.services.grades import GRADE_BANDS, grade_for  # noqa: F401 (re-exported)
from obsctl.services.rates import percent

EVENT_ERROR_WEIGHT = 5


@dataclass(frozen=True)
class AgentTotals:
    """What the window holds for one agent (or one agent's day)."""

    sessions: int
    error_sessions: int
    completed_sessions: int
    events: int  # body events (no session_start/session_end)
    error_events: int
    timed_events: int
    p50_ms: float | None
    p95_ms: float | None
    tokens: int
    cost: float | None  # USD; None when no event is priced

    @property
    def tokens_per_session(self) -> float | None:
        return self.tokens / self.sessions if self.sessions else None

    @property
    def cost_per_session(self) -> float | None:
        return self.cost / self.sessions if self.sessions and self.cost is not None else None

    @property
    def error_event_rate(self) -> float | None:
        """Percent of the body events that are errors, unrounded; None without events."""
        return 100.0 * self.error_events / self.events if self.events else None


@dataclass(frozen=True)
class FleetReference:
    """The typical agent's values: medians over the agents of the window."""

    agents: int
    p50_ms: float | None
    p95_ms: float | None
    tokens_per_session: float | None
    cost_per_session: float | None
    sessions: float | None

    def per_day(self, days: int) -> FleetReference:
        """The same reference for one day of a `days`-long window (volume scaled)."""
        sessions = None if self.sessions is None else self.sessions / days
        return FleetReference(self.agents, self.p50_ms, self.p95_ms, self.tokens_per_session,
                              self.cost_per_session, sessions)


def _median(values) -> float | None:
    present = [v for v in values if v is not None]
    return float(statistics.median(present)) if present else None


def fleet_reference(totals: list[AgentTotals]) -> FleetReference:
    return FleetReference(
        agents=len(totals),
        p50_ms=_median(t.p50_ms for t in totals),
        p95_ms=_median(t.p95_ms for t in totals),
        tokens_per_session=_median(t.tokens_per_session for t in totals),
        cost_per_session=_median(t.cost_per_session for t in totals),
        sessions=_median(t.sessions for t in totals),
    )


def ratio(value: float | None, reference: float | None) -> float | None:
    """100 at or below the reference, 100 * reference / value above it; None when unknown."""
    if value is None or reference is None:
        return None
    if value <= reference:
        return 100.0
    return 100.0 * reference / value


def _mean(parts) -> float:
    known = [p for p in parts if p is not None]
    return sum(known) / len(known) if known else 100.0


def _r(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def change_parts(changes: list[dict]) -> dict[str, float | None]:
    """The parts that unacknowledged regressions of the agent's configuration add: latency
    ratio(after, before) to performance, cost ratio(after, before) to efficiency, and
    100 - 5 x the added error points to reliability (the worst change per metric)."""
    parts: dict[str, float | None] = {"reliability": None, "performance": None, "efficiency": None}
    for change in changes:
        before, after, metrics = change["before"], change["after"], change["metrics"]
        found = {}
        if metrics["llm_p50_ms"] == "regression":
            found["performance"] = ratio(after["llm_p50_ms"], before["llm_p50_ms"])
        if metrics["cost_per_session_usd"] == "regression":
            found["efficiency"] = ratio(after["cost_per_session_usd"], before["cost_per_session_usd"])
        if metrics["error_event_rate"] == "regression":
            added = after["error_event_rate"] - before["error_event_rate"]
            found["reliability"] = max(0.0, 100.0 - EVENT_ERROR_WEIGHT * added)
        for name, part in found.items():
            current = parts[name]
            if part is not None and (current is None or part < current):
                parts[name] = part
    return parts


def score(totals: AgentTotals, ref: FleetReference, changes: Sequence[dict] = ()) -> dict:
    """{"overall_score", "grade", "dimensions": {name: {"score", "grade"}}, "breakdown"}.

    `changes`: the agent's unacknowledged regressions in the window (services/changes.py),
    each adding a part to the dimension it made worse (change_parts)."""
    error_rate = totals.error_event_rate
    session_error_rate = 100.0 * totals.error_sessions / totals.sessions
    completion_rate = 100.0 * totals.completed_sessions / totals.sessions
    event_part = 100.0 if error_rate is None else max(0.0, 100.0 - EVENT_ERROR_WEIGHT * error_rate)
    session_part = 100.0 - session_error_rate
    p50_part, p95_part = ratio(totals.p50_ms, ref.p50_ms), ratio(totals.p95_ms, ref.p95_ms)
    tokens_part = ratio(totals.tokens_per_session, ref.tokens_per_session)
    cost_part = ratio(totals.cost_per_session, ref.cost_per_session)
    volume_part = min(100.0, 100.0 * totals.sessions / ref.sessions) if ref.sessions else 100.0

    changed = change_parts(list(changes))
    raw = {
        "reliability": _mean([event_part, session_part, changed["reliability"]]),
        "performance": _mean([p50_part, p95_part, changed["performance"]]),
        "efficiency": _mean([tokens_part, cost_part, changed["efficiency"]]),
        "throughput": _mean([volume_part, completion_rate]),
    }
    dimensions: dict[str, dict] = {}
    for name in DIMENSIONS:
        reported = round(raw[name], 2)
        dimensions[name] = {"score": reported, "grade": grade_for(reported)}
    overall = round(sum(d["score"] for d in dimensions.values()) / len(DIMENSIONS), 2)
    breakdown = {
        "reliability": {
            "body_events": totals.events, "error_events": totals.error_events,
            "error_event_rate": percent(totals.error_events, totals.events),
            "sessions": totals.sessions, "error_sessions": totals.error_sessions,
            "error_session_rate": percent(totals.error_sessions, totals.sessions),
            "event_score": _r(event_part), "session_score": _r(session_part),
            "change_score": _r(changed["reliability"]),
        },
        "performance": {
            "timed_events": totals.timed_events, "p50_duration_ms": totals.p50_ms,
            "p95_duration_ms": totals.p95_ms, "fleet_p50_duration_ms": ref.p50_ms,
            "fleet_p95_duration_ms": ref.p95_ms, "p50_score": _r(p50_part),
            "p95_score": _r(p95_part), "change_score": _r(changed["performance"]),
        },
        "efficiency": {
            "tokens": totals.tokens, "tokens_per_session": _r(totals.tokens_per_session),
            "fleet_tokens_per_session": _r(ref.tokens_per_session),
            "cost_usd": _r(totals.cost, 6), "cost_per_session": _r(totals.cost_per_session, 6),
            "fleet_cost_per_session": _r(ref.cost_per_session, 6),
            "tokens_score": _r(tokens_part), "cost_score": _r(cost_part),
            "change_score": _r(changed["efficiency"]),
        },
        "throughput": {
            "sessions": totals.sessions, "completed_sessions": totals.completed_sessions,
            "completion_rate": percent(totals.completed_sessions, totals.sessions),
            "fleet_sessions": _r(ref.sessions),
            "volume_score": _r(volume_part),
            "completion_score": percent(totals.completed_sessions, totals.sessions),
        },
    }
    return {"overall_score": overall, "grade": grade_for(overall), "dimensions": dimensions,
            "breakdown": breakdown}
