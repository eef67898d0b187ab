"""Analytics across all sessions (spec 2.5), computed with SQL aggregates at read time."""

from __future__ import annotations

from datetime import datetime, timedelta

from obsctl.services.pricing import usd
from obsctl.services.rates import percent
from obsctl.store import Store
from obsctl.timeutil import format_ts, now

TOP_AGENTS = 10
DAYS = 90


def _ratio(numerator: float, denominator: float, scale: float = 1.0) -> float:
    return round(numerator * scale / denominator, 2) if denominator else 0.0


def _overview(row: dict) -> tuple[dict, dict]:
    total = row["total_sessions"]
    tokens = row["total_tokens_in"] + row["total_tokens_out"]
    overview = {
        "total_sessions": total,
        "active_sessions": row["active_sessions"],
        "completed_sessions": row["completed_sessions"],
        "error_sessions": row["error_sessions"],
        # The spec's `error_rate` is the error session rate (services/rates.py); the
        # explicit name says so.
        "error_rate": percent(row["error_sessions"], total) or 0.0,
        "error_session_rate": percent(row["error_sessions"], total) or 0.0,
        "total_events": row["total_events"],
        "total_tokens": tokens,
        "total_tokens_in": row["total_tokens_in"],
        "total_tokens_out": row["total_tokens_out"],
        "avg_tokens_per_session": _ratio(tokens, total),
        "earliest_session": row["earliest_session"],
        "latest_session": row["latest_session"],
    }
    avg = row["duration_avg"]
    duration = {
        "avg_ms": round(avg, 2) if avg is not None else None,
        "min_ms": row["duration_min"],
        "max_ms": row["duration_max"],
    }
    return overview, duration


def first_day(at: datetime, days: int = DAYS) -> str:
    """Start (00:00 UTC) of the first of the last `days` calendar days, today included."""
    start = (at - timedelta(days=days - 1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return format_ts(start)


def get_analytics(store: Store, *, at: datetime | None = None) -> dict:
    """The analytics document: overview, duration, top agents, model usage, event types,
    sessions over the last 90 days and activity per hour of day (UTC)."""
    since = first_day(at or now())
    with store.read_snapshot():
        current = store.analytics.rollup_is_current()
    if not current:
        store.analytics.repair_rollup()
    with store.read_snapshot():
        overview, duration = _overview(store.analytics.overview())
        agents = store.analytics.top_agents(TOP_AGENTS)
        days = store.analytics.sessions_by_day(since)
        models = store.analytics.model_usage()
        types = store.analytics.event_type_counts()
        hours = dict(store.analytics.hourly_counts())
        costs = cost_breakdown(store.analytics.cost_by_agent_day(), store.analytics.cost_by_model(),
                               since[:10])
    return {
        "overview": overview,
        "duration": duration,
        "top_agents": [
            {"agent_name": name, "session_count": count, "total_tokens": tokens,
             "avg_tokens": _ratio(tokens, count)}
            for name, count, tokens in agents
        ],
        "model_usage": [
            {"model": model, "call_count": calls, "total_tokens": t_in + t_out,
             "total_tokens_in": t_in, "total_tokens_out": t_out, "total_tokens_cache_read": c_read,
             "total_tokens_cache_write": c_write, "total_tokens_reasoning": reasoning,
             "avg_duration_ms": round(d_sum / d_count, 2) if d_count else None}
            for model, calls, t_in, t_out, d_sum, d_count, c_read, c_write, reasoning in models
        ],
        "event_types": [{"event_type": t, "count": n} for t, n in types],
        "sessions_over_time": [
            {"day": day, "session_count": count, "total_tokens": tokens}
            for day, count, tokens in days
        ],
        "hourly_activity": [{"hour": h, "event_count": hours.get(h, 0)} for h in range(24)],
        "costs": costs,
    }


def _add(total: float | None, cost: float | None) -> float | None:
    return total if cost is None else cost if total is None else total + cost


def cost_breakdown(agent_days: list[tuple], models: list[tuple], first: str) -> dict:
    """The `costs` section from the stored costs (one grouped read of the sessions, one of the
    events): all-time totals per agent and per model, and per start day of the last 90 days.
    A cost is null when nothing in its group was priced; `unpriced_calls` counts the calls
    that used tokens of a model without a known price (left out of the cost)."""
    agents: dict[str, list] = {}
    days: dict[str, list] = {}
    total, unpriced = None, 0
    for agent, day, cost, calls, sessions in agent_days:
        total, unpriced = _add(total, cost), unpriced + calls
        for key, groups in ((agent, agents), (day if day >= first else None, days)):
            if key is None:
                continue
            group = groups.setdefault(key, [None, 0, 0])
            group[0], group[1], group[2] = _add(group[0], cost), group[1] + calls, group[2] + sessions
    by_agent = sorted(agents.items(), key=lambda kv: (kv[1][0] is None, -(kv[1][0] or 0), kv[0]))
    return {
        "total_usd": usd(total),
        "unpriced_calls": unpriced,
        "by_agent": [{"agent_name": name, "cost_usd": usd(cost), "unpriced_calls": calls,
                      "session_count": sessions} for name, (cost, calls, sessions) in by_agent],
        "by_model": [{"model": model, "cost_usd": usd(cost), "unpriced_calls": calls, "call_count": n}
                     for model, cost, calls, n in models],
        "by_day": [{"day": day, "cost_usd": usd(cost), "unpriced_calls": calls, "session_count": sessions}
                   for day, (cost, calls, sessions) in sorted(days.items())],
    }
