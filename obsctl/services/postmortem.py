"""Postmortems: the report of one session's failure, and the sessions worth one.

Severity (the same rule for a report and for the candidates list, from the session's totals):

    none   no errors
    SEV-1  status error and error rate >= 25%
    SEV-2  status error, or error rate >= 25%
    SEV-3  error rate >= 5%, or 3+ errors
    SEV-4  any other session with errors

where error rate = error_count / event_count of the session.
"""

from __future__ import annotations

from datetime import timedelta

import sqlite_utils

from obsctl.params import MAX_COUNT, IntParam
from obsctl.services import postmortem_factors as factors_mod
from obsctl.services.postmortem_markdown import render_markdown
from obsctl.services.postmortem_timeline import timeline
from obsctl.services.triage_analysis import SessionAnalysis, analyse_session
from obsctl.services.triage_cost import cost_by_event_type
from obsctl.store import triage as store
from obsctl.text import plural
from obsctl.timeutil import iso_minus, now_iso

SEV_HIGH_RATE = 0.25
SEV_MEDIUM_RATE = 0.05
SEV_MEDIUM_COUNT = 3
SEVERITIES = ("SEV-1", "SEV-2", "SEV-3", "SEV-4", "none")

CANDIDATES_LIMIT = IntParam("limit", 1, 100, default=20, capped=True)
CANDIDATES_MIN_ERRORS = IntParam("min_errors", 0, MAX_COUNT, default=1)
CANDIDATES_DAYS = IntParam("days", 1, 3650)  # no default: every session


def severity_for(status: str, error_count: int, event_count: int) -> str:
    """SEV-1..SEV-4, or `none` without errors (rule in the module docstring)."""
    if error_count == 0:
        return "none"
    rate = error_count / max(event_count, 1)
    if status == "error" and rate >= SEV_HIGH_RATE:
        return "SEV-1"
    if status == "error" or rate >= SEV_HIGH_RATE:
        return "SEV-2"
    if rate >= SEV_MEDIUM_RATE or error_count >= SEV_MEDIUM_COUNT:
        return "SEV-3"
    return "SEV-4"


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
            "p50_ms": stats.percentile(50), "p95_ms": stats.percentile(95),
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
    return f"{who} recovered from {len(a.errors)} error(s): {reason}"


def _summary(a: SessionAnalysis, cascades: dict, factors: list[dict], cost: dict) -> str:
    s = a.session
    duration = "an unknown time" if a.duration_ms is None else f"{a.duration_ms / 1000:.1f} s"
    state = {"completed": "completed", "error": "ended with status error"}.get(s["status"], "is still active")
    parts = [(f"Session {s['session_id']} of agent {s['agent_name']} ran {plural(len(a.work), 'event')} over "
              f"{duration} and {state}.")]
    if a.errors:
        parts.append(f"{len(a.errors)} of {plural(len(a.work), 'event')} failed "
                     f"({100 * a.error_rate:.1f}%) in {len(cascades['cascades'])} cascade(s); the "
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
        parts.append(f"Cost ${cost['total_usd']:.4f}"
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
        "by_event_type": cost_by_event_type(a.steps, pricer),
        "failed_steps": a.cost["failed_steps"],
        "unpriced_models": a.cost["unpriced_models"],
        "unpriced_tokens": a.cost["unpriced_tokens"],
    }
    report = {
        "session_id": s["session_id"],
        "agent_name": s["agent_name"],
        "generated_at": now_iso(),
        "severity": severity_for(s["status"], s["error_count"], s["event_count"]),
        "title": _title(a, factors[0] if factors else None),
        "summary": _summary(a, cascades, factors, cost),
        "status": s["status"],
        "started_at": s["started_at"],
        "ended_at": s["ended_at"],
        "duration_ms": a.duration_ms,
        "timeline": timeline(a),
        "error_cascade": cascades,
        "cost_breakdown": cost,
        "tool_performance": _tool_performance(a),
        "contributing_factors": factors,
        "recommendations": factors_mod.recommendations(factors),
    }
    report["markdown"] = render_markdown(report)
    return report


def postmortem_session(db: sqlite_utils.Database, session_id: str, *, pricer) -> dict:
    """Generate the postmortem of one session (NotFound when it does not exist)."""
    return build_postmortem(analyse_session(db, session_id, pricer), pricer)


def postmortem_candidates(db: sqlite_utils.Database, *, min_errors: int | None = None,
                          limit: int | None = None, agent: str | None = None,
                          days: int | None = None) -> dict:
    """Sessions with at least `min_errors` errors, most severe first, then most errors, then
    newest: `{"candidates": [...], "total": N}`. `days` keeps sessions started in the last
    N days (default: all); `agent` keeps one agent's sessions."""
    limit = CANDIDATES_LIMIT.check(limit)
    min_errors = CANDIDATES_MIN_ERRORS.check(min_errors)
    days = CANDIDATES_DAYS.check(days)
    since = iso_minus(timedelta(days=days)) if days is not None else None
    rows, total = store.postmortem_candidates(
        db, min_errors=min_errors, limit=limit, agent=agent or None, since=since,
        high_rate=SEV_HIGH_RATE, medium_rate=SEV_MEDIUM_RATE, medium_count=SEV_MEDIUM_COUNT)
    candidates = []
    for row in rows:
        candidates.append({
            "session_id": row["session_id"],
            "agent_name": row["agent_name"],
            "started_at": row["started_at"],
            "status": row["status"],
            "error_count": row["error_count"],
            "event_count": row["event_count"],
            "error_rate": round(100.0 * row["error_count"] / max(row["event_count"], 1), 2),
            "severity": severity_for(row["status"], row["error_count"], row["event_count"]),
        })
    return {"candidates": candidates, "total": total}
