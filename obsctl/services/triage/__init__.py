"""Auto-triage: a health score, a grade and severity-ranked findings for one session, and
the batch view over recent sessions. Deterministic; no model calls.

Health score (0-100, 100 healthy; documented in docs/triage.md):

    score = 100 - (errors + tools + loops + latency + baseline), floored at 0, one decimal
    errors   = 40 x error_rate + min(10, 2 x errors) + (15 if the session failed)
    tools    = min(15, 5 x tools whose failure rate is 50% or more)
    loops    = min(20, sum over runs of 5+ identical successful tool calls of min(10, run length))
    latency  = min(10, 2 x slow successful events)
    baseline = min(20, sum per metric: anomaly critical 10, anomaly warning 6,
                                       drift warning 4, drift info 2)
    cost     = min(20, (10 if cost >= $5, else 4 if >= $1)
                       + (10 if cost >= 100x the agent's median session))
    severity = what the report's severity takes beyond the terms above: the score is at most
               64.9 (grade C) with a critical finding, 89.9 (B+) with a warning, 94.9 (A) with
               an info finding; only a healthy session can score A+. So the grade and the
               severity never contradict each other.

Failed events are charged by the error and tool terms only; the loop and latency terms look
at successful events. With the baseline terms non-decreasing in the session's totals, adding
an error event can only lower the score (a property test checks it).
"""

from __future__ import annotations

from obsctl.models.triage import BATCH_LIMIT, BATCH_MIN_EVENTS
from obsctl.services.grades import grade_for
from obsctl.services.triage import findings as rules
from obsctl.services.triage.analysis import analyse_session
from obsctl.services.triage.facts import SessionAnalysis
from obsctl.services.triage.ranking import all_findings, worst_severity
from obsctl.store import Store

ERROR_RATE_WEIGHT = 40.0
ERROR_COUNT_POINTS, ERROR_COUNT_CAP = 2.0, 10.0
FAILED_POINTS = 15.0
TOOL_POINTS, TOOL_CAP, TOOL_FAILING_RATE = 5.0, 15.0, 0.5
LOOP_CAP_EACH, LOOP_CAP = 10.0, 20.0
SLOW_POINTS, SLOW_CAP = 2.0, 10.0
BASELINE_POINTS: dict[tuple[str, str | None], float] = {("anomaly", "critical"): 10.0, ("anomaly", "warning"): 6.0,
                   ("drift", "warning"): 4.0, ("drift", "info"): 2.0}
BASELINE_CAP = 20.0
COST_CAP = 20.0
# The best score a session can have at each severity (see the module docstring).
SEVERITY_CEILING = {"critical": 64.9, "warning": 89.9, "info": 94.9, "healthy": 100.0}

def score_penalties(a: SessionAnalysis) -> dict[str, float]:
    """The points each term takes off the health score (see the module docstring)."""
    errors = (ERROR_RATE_WEIGHT * a.error_rate
              + min(ERROR_COUNT_CAP, ERROR_COUNT_POINTS * a.error_events)
              + (FAILED_POINTS if a.failed else 0.0))
    failing_tools = sum(1 for t in a.tools.values() if t.failure_rate >= TOOL_FAILING_RATE)
    loops = sum(min(LOOP_CAP_EACH, loop.count) for loop in a.success_loops)
    slow = sum(kind.count for kind in a.slow)
    baseline = sum(BASELINE_POINTS.get((c.status, c.severity), 0.0) for c in a.baseline.checks)
    total, ratio, _ = rules.cost_level(a)
    cost = 0.0
    if total is not None:
        cost += 10.0 if total >= rules.COST_HIGH_USD else 4.0 if total >= rules.COST_NOTABLE_USD else 0.0
    if ratio is not None:
        cost += 10.0 if ratio >= rules.COST_HIGH_RATIO else 0.0
    return {
        "errors": round(errors, 2),
        "tools": float(min(TOOL_CAP, TOOL_POINTS * failing_tools)),
        "loops": float(min(LOOP_CAP, loops)),
        "latency": float(min(SLOW_CAP, SLOW_POINTS * slow)),
        "baseline": float(min(BASELINE_CAP, baseline)),
        "cost": float(min(COST_CAP, cost)),
    }


def health_score(penalties: dict[str, float]) -> float:
    return round(max(0.0, 100.0 - sum(penalties.values())), 1)


def cap_by_severity(penalties: dict[str, float], severity: str) -> tuple[dict[str, float], float]:
    """(`penalties` with its `severity` term, the score): the severity term is the points that
    bring the score down to the severity's ceiling when the other terms leave it above."""
    ceiling = SEVERITY_CEILING[severity]
    above = 100.0 - sum(penalties.values()) - ceiling
    return {**penalties, "severity": round(max(0.0, above), 2)}, min(health_score(penalties), ceiling)


def _tool_view(stats) -> dict:
    return {"tool_name": stats.tool_name, "calls": stats.calls, "failures": stats.failures,
            "failure_rate_pct": round(100.0 * stats.failure_rate, 2), "slow_calls": stats.slow_calls,
            "p50_ms": stats.p50_ms, "p95_ms": stats.p95_ms}


def _loop_view(loop) -> dict:
    return {"tool_name": loop.tool_name, "count": loop.count, "input": loop.tool_input,
            "failures": loop.failures, "first_seen": loop.first.timestamp, "last_seen": loop.last.timestamp}


def build_report(a: SessionAnalysis) -> dict:
    """The triage report of an analysed session."""
    session = a.session
    findings = all_findings(a)
    severity = worst_severity(findings)
    penalties, score = cap_by_severity(score_penalties(a), severity)
    counts = a.counts
    return {
        "session_id": session["session_id"],
        "agent_name": session["agent_name"],
        "status": session["status"],
        "health_score": score,
        "grade": grade_for(score),
        "severity": severity,
        "findings": findings,
        "metrics": {
            "duration_ms": a.duration_ms,
            "total_tokens": session["total_tokens_in"] + session["total_tokens_out"],
            **counts.view(),
            # The spec's name for the same rate (services/rates.py).
            "error_rate": counts.error_event_rate,
            "tokens_in": session["total_tokens_in"],
            "tokens_out": session["total_tokens_out"],
            "processing_ms": round(a.processing_ms, 3),
            "cost_usd": a.cost["total_usd"],
        },
        "score_penalties": penalties,
        "error_groups": [g.view() for g in a.groups],
        "tools": [_tool_view(t) for t in a.tools.values()],
        "loops": [_loop_view(loop) for loop in a.loops],
        "baseline": a.baseline.view(),
        "cost": a.cost,
    }


def triage_session(store: Store, session_id: str, *, pricer) -> dict:
    """Triage one session (NotFound when it does not exist)."""
    return build_report(analyse_session(store, session_id, pricer))


def triage_batch(store: Store, *, pricer, limit: int | None = None,
                 min_events: int | None = None, agent: str | None = None,
                 since: str | None = None, until: str | None = None) -> dict:
    """Triage the `limit` most recently started sessions with at least `min_events` events
    (optionally of one agent, optionally started in [since, until): an age like 24h or an
    ISO 8601 time, and an ISO 8601 time): `{"reports": [...], "total": N}`, worst health
    score first.

    `total` counts every session matching the filters; `reports` covers the most recent
    `limit` of them.
    """
    limit = BATCH_LIMIT.resolve(limit)
    min_events = BATCH_MIN_EVENTS.resolve(min_events)
    from obsctl.services.windows import optional_window

    start, end = optional_window(since, until)
    ids, total = store.triage.recent_session_ids(limit=limit, min_events=min_events, agent=agent or None,
                                                 since=start, until=end)
    reports = [triage_session(store, session_id, pricer=pricer) for session_id in ids]
    # Stable sort: equal scores keep the newest-first order of `ids`.
    reports.sort(key=lambda r: r["health_score"])
    return {"reports": reports, "total": total,
            "incidents": window_incidents(store, since=since, until=until, agent=agent or None)}


BATCH_INCIDENTS = 10


def window_incidents(store: Store, *, since: str | None, until: str | None, agent: str | None) -> list[dict]:
    """The incidents (services/incidents) of a window, default the last 24 hours: what the
    sessions of a batch or a candidates list have in common."""
    from obsctl.services.incidents import list_incidents

    return list_incidents(store, since=since, until=until, agent=agent, limit=BATCH_INCIDENTS)["incidents"]
