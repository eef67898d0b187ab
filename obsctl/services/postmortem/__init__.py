"""Postmortems: the report of one session's failure, and the sessions worth one.

Severity (the same rule for a report and for the candidates list, with the thresholds of
triage's errors and cost findings): the worse of

    by errors                                       by cost
    none   no error events                          none   under $1
    SEV-1  status error and error event rate >= 25%
    SEV-2  status error, or error event rate >= 25%  SEV-2  $20 or more
    SEV-3  error event rate >= 5%, or 3+ error events SEV-3  $5 or more
    SEV-4  any other session with errors             SEV-4  $1 or more

where the error event rate is the percent (two decimals, as reported) of the session's body
events (all but session_start/session_end) that are errors (services/rates.py). Triage's
errors finding is critical for SEV-1/SEV-2 sessions, warning for SEV-3 and info for SEV-4,
except that triage also counts a session whose last body event failed as failed (critical)
while the severity reads only the status, which the candidates list ranks in SQL from the
session totals.
"""

from __future__ import annotations

from datetime import timedelta

from obsctl.models.postmortem import CANDIDATES_DAYS, CANDIDATES_LIMIT, CANDIDATES_MIN_ERRORS
from obsctl.services.postmortem import factors as factors_mod
from obsctl.services.postmortem.incident import postmortem_incident  # noqa: F401 (a use case of this area)
from obsctl.services.postmortem.markdown import render_markdown
from obsctl.services.postmortem.timeline import timeline
from obsctl.services.rates import SessionEventCounts, format_percent, percent
from obsctl.services.triage import findings as rules
from obsctl.services.triage import window_incidents
from obsctl.services.triage.analysis import analyse_session
from obsctl.services.triage.cost import cost_by_event_type
from obsctl.services.triage.facts import SessionAnalysis
from obsctl.store import Store
from obsctl.text import plural
from obsctl.timeutil import iso_minus, now_iso

SEV_HIGH_RATE = rules.ERROR_RATE_CRITICAL
SEV_MEDIUM_RATE = rules.ERROR_RATE_WARNING
SEV_MEDIUM_COUNT = rules.ERRORS_WARNING
SEVERITIES = ("SEV-1", "SEV-2", "SEV-3", "SEV-4", "none")
# (severity, the cost at which it starts), worst first: $5 and $1 are triage's critical and
# warning cost thresholds.
COST_SEVERITIES = (("SEV-2", 20.0), ("SEV-3", rules.COST_HIGH_USD), ("SEV-4", rules.COST_NOTABLE_USD))
COST_FLOORS = (COST_SEVERITIES[0][1], COST_SEVERITIES[1][1], COST_SEVERITIES[2][1])



def severity_and_reason(status: str, error_events: int, body_events: int,
                        cost_usd: float | None = None) -> tuple[str, str]:
    """(SEV-1..SEV-4 or `none`, why), by the rule in the module docstring: the worse of the
    errors' and the cost's severity (both reasons when they agree)."""
    by_errors = _errors_severity(status, error_events, body_events)
    by_cost = _cost_severity(cost_usd)
    if by_cost is None or SEVERITIES.index(by_cost[0]) > SEVERITIES.index(by_errors[0]):
        return by_errors
    if by_cost[0] == by_errors[0]:
        return by_errors[0], f"{by_errors[1]}; {by_cost[1]}"
    return by_cost


def _cost_severity(cost_usd: float | None) -> tuple[str, str] | None:
    for severity, floor in COST_SEVERITIES:
        if cost_usd is not None and cost_usd >= floor:
            return severity, f"cost ${cost_usd:,.2f}, at least ${floor:g}"
    return None


def _errors_severity(status: str, error_events: int, body_events: int) -> tuple[str, str]:
    if error_events == 0:
        return "none", "no event failed"
    rate = percent(error_events, body_events) or 0.0
    share = f"{error_events:,} of {body_events:,} events failed ({format_percent(rate)})"
    failed, high = status == "error", rate >= SEV_HIGH_RATE
    if failed and high:
        return "SEV-1", f"status error and {share}, at least {SEV_HIGH_RATE:g}%"
    if failed:
        return "SEV-2", f"status error; {share}"
    if high:
        return "SEV-2", f"{share}, at least {SEV_HIGH_RATE:g}%"
    if rate >= SEV_MEDIUM_RATE:
        return "SEV-3", f"{share}, at least {SEV_MEDIUM_RATE:g}%"
    if error_events >= SEV_MEDIUM_COUNT:
        return "SEV-3", f"{share}, at least {SEV_MEDIUM_COUNT} errors"
    return "SEV-4", f"{share}, under {SEV_MEDIUM_RATE:g}% and under {SEV_MEDIUM_COUNT} errors"


def severity_for(status: str, error_events: int, body_events: int, cost_usd: float | None = None) -> str:
    """SEV-1..SEV-4, or `none` (rule in the module docstring)."""
    return severity_and_reason(status, error_events, body_events, cost_usd)[0]


def _tool_performance(a: SessionAnalysis) -> list[dict]:
    by_fingerprint = {g.fingerprint: g for g in a.groups}
    rows = []
    for stats in a.tools.values():
        modes = [{"fingerprint": fp, "kind": by_fingerprint[fp].kind, "count": n,
                  "example": by_fingerprint[fp].example}
                 for fp, n in sorted(stats.failure_modes.items(), key=lambda kv: -kv[1])]
        rows.append({
            "tool_name": stats.tool_name, "calls": stats.calls, "failures": stats.failures,
            "success_rate": round(100.0 * (1 - stats.failure_rate), 2),
            "p50_ms": stats.p50_ms, "p95_ms": stats.p95_ms,
            "slow_calls": stats.slow_calls, "failure_modes": modes,
        })
    return rows


def _title(a: SessionAnalysis, top: dict | None) -> str:
    who = f"{a.session['agent_name']} session {a.session['session_id']}"
    reason = top["title"] if top else None
    if not a.errors:
        return f"{who}: no errors" + (f"; {reason}" if reason else "")
    if a.failed:
        return f"{who} failed: {reason}"
    return f"{who} recovered from {a.error_events} error(s): {reason}"


def _summary(a: SessionAnalysis, cascades: dict, factors: list[dict], cost: dict) -> str:
    s = a.session
    duration = "an unknown time" if a.duration_ms is None else f"{a.duration_ms / 1000:.1f} s"
    state = {"completed": "completed", "error": "ended with status error"}.get(s["status"], "is still active")
    parts = [(f"Session {s['session_id']} of agent {s['agent_name']} ran {plural(a.body_events, 'event')} over "
              f"{duration} and {state}.")]
    if a.errors:
        parts.append(f"{a.counts.describe()} in {len(cascades['cascades'])} cascade(s); the "
                     f"longest has {cascades['longest']} error(s).")
        first = a.errors[0]
        parts.append(f"The first error was {first.event_type}"
                     + (f" from tool {first.tool_name}" if first.tool_name else "")
                     + f" at {first.timestamp}: {first.message or '-'}.")
    else:
        parts.append("No event failed.")
    if factors:
        top = factors[0]
        parts.append(f"Most likely contributing factor: {top['title']} (likelihood {top['likelihood']:.2f}).")
    if cost["total_usd"] is not None:
        maker = rules.cost_maker(a, cost["total_usd"]) if cost["total_usd"] >= rules.COST_NOTABLE_USD else ""
        parts.append(f"Cost ${cost['total_usd']:.4f}"
                     + (f" (most of it {maker})" if maker else "")
                     + (f", {cost['failed_steps']['total_tokens']:,} tokens on failed steps"
                        if cost["failed_steps"]["total_tokens"] else "")
                     + (f"; unpriced: {', '.join(cost['unpriced_models'])}" if cost["unpriced_models"]
                        else "") + ".")
    elif cost["unpriced_tokens"]:
        parts.append(f"Cost unknown: {cost['unpriced_tokens']:,} tokens could not be priced.")
    return " ".join(parts)


def build_postmortem(a: SessionAnalysis, pricer) -> dict:
    """The postmortem report of an analysed session (DECISIONS field names)."""
    s = a.session
    cascade_list = factors_mod.find_cascades(a)
    cascades = factors_mod.cascade_views(a, cascade_list)
    factors = factors_mod.contributing_factors(a, cascade_list)
    cost = {
        "total_usd": a.cost["total_usd"],
        "by_model": a.cost["by_model"],
        "by_event_type": cost_by_event_type(a.usage, pricer),
        "failed_steps": a.cost["failed_steps"],
        "unpriced_models": a.cost["unpriced_models"],
        "unpriced_tokens": a.cost["unpriced_tokens"],
    }
    counts = a.counts
    severity, reason = severity_and_reason(s["status"], counts.error_events, counts.body_events,
                                           cost["total_usd"])
    if _cost_severity(cost["total_usd"]) and (maker := rules.cost_maker(a, cost["total_usd"])):
        reason = reason.replace(f"cost ${cost['total_usd']:,.2f}", f"cost ${cost['total_usd']:,.2f} ({maker})")
    report = {
        "session_id": s["session_id"],
        "agent_name": s["agent_name"],
        "generated_at": now_iso(),
        "severity": severity,
        "severity_reason": reason,
        **counts.view(),
        "title": _title(a, factors[0] if factors else None),
        "summary": _summary(a, cascades, factors, cost),
        "status": s["status"],
        "started_at": s["started_at"],
        "ended_at": s["ended_at"],
        "duration_ms": a.duration_ms,
        "timeline": (shown := timeline(a)),
        "timeline_left_out": a.step_count - len(shown),
        "error_cascade": cascades,
        "cost_breakdown": cost,
        "tool_performance": _tool_performance(a),
        "contributing_factors": factors,
        "recommendations": factors_mod.recommendations(factors),
    }
    report["markdown"] = render_markdown(report)
    return report


def postmortem_session(store: Store, session_id: str, *, pricer) -> dict:
    """Generate the postmortem of one session (NotFound when it does not exist)."""
    return build_postmortem(analyse_session(store, session_id, pricer), pricer)


def postmortem_candidates(store: Store, *, min_errors: int | None = None,
                          limit: int | None = None, agent: str | None = None,
                          days: int | None = None) -> dict:
    """Sessions with at least `min_errors` error events (and, unless it is 0, the sessions whose
    cost alone earns a severity: $1 or more), most severe first, then most error
    events, then newest: `{"candidates": [...], "total": N}`. `days` keeps sessions started in the last
    N days (default: all); `agent` keeps one agent's sessions."""
    limit = CANDIDATES_LIMIT.resolve(limit)
    min_errors = CANDIDATES_MIN_ERRORS.resolve(min_errors)
    days = CANDIDATES_DAYS.check(days)
    since = iso_minus(timedelta(days=days)) if days is not None else None
    rows, total = store.triage.postmortem_candidates(
        min_errors=min_errors, limit=limit, agent=agent or None, since=since,
        high_rate=round(SEV_HIGH_RATE * 100), medium_rate=round(SEV_MEDIUM_RATE * 100),
        medium_count=SEV_MEDIUM_COUNT, cost_floors=COST_FLOORS)
    candidates = []
    for row in rows:
        counts = SessionEventCounts(row["event_count"], row["error_count"], row["body_events"],
                                    row["error_events"])
        severity, reason = severity_and_reason(row["status"], counts.error_events,
                                               counts.body_events, row["cost_usd"])
        candidates.append({
            "session_id": row["session_id"],
            "agent_name": row["agent_name"],
            "started_at": row["started_at"],
            "status": row["status"],
            **counts.view(),
            # The spec's name for the same rate (services/rates.py).
            "error_rate": counts.error_event_rate,
            "severity": severity,
            "severity_reason": reason,
        })
    incidents = window_incidents(store, since=f"{days}d" if days is not None else None, until=None,
                                 agent=agent or None)
    return {"candidates": candidates, "total": total, "incidents": incidents}
