"""The per-session summary (spec 2.4) shared by compare and the explain summary."""

from __future__ import annotations

from obsctl.jsonutil import loads_column
from obsctl.services.pricing import usd
from obsctl.services.sessions.fields import session_duration_ms
from obsctl.store import Store


def _ms(value: float) -> float:
    """Milliseconds to 3 decimals (sums of floats carry binary noise)."""
    return round(value, 3)


def _by_count(items: dict, key) -> dict:
    """The map ordered by its count, largest first, then by name."""
    return dict(sorted(items.items(), key=lambda kv: (-key(kv[1]), kv[0])))


def session_summary(store: Store, session: dict) -> dict:
    """Summary of one stored session row: totals, durations and per-model/type/tool maps.

    Tokens, event and error counts are the session's own totals (a session_end may set final
    token counts); models, event types and tools are aggregated over its events in SQL.
    """
    models: dict[str, dict] = {}
    event_types: dict[str, int] = {}
    tools: dict[str, dict] = {}
    duration_sum = 0.0
    duration_count = 0
    for group in store.session_aggregates.session_breakdown(session["session_id"]):
        count = group["events"]
        event_types[group["event_type"]] = event_types.get(group["event_type"], 0) + count
        duration_sum += group["duration_sum"]
        duration_count += group["duration_count"]
        if group["model"] is not None:
            entry = models.setdefault(group["model"], {"calls": 0, "tokens_in": 0, "tokens_out": 0,
                                                       "duration_ms": 0.0, "timed_calls": 0})
            entry["calls"] += count
            entry["tokens_in"] += group["tokens_in"]
            entry["tokens_out"] += group["tokens_out"]
            entry["duration_ms"] = _ms(entry["duration_ms"] + group["duration_sum"])
            entry["timed_calls"] += group["duration_count"]
        if group["tool_name"] is not None:
            entry = tools.setdefault(group["tool_name"], {"calls": 0, "total_duration": 0.0})
            entry["calls"] += count
            entry["total_duration"] = _ms(entry["total_duration"] + group["duration_sum"])
    for entry in models.values():
        # A model's latency: the mean over its calls that report a duration (null when none does).
        timed = entry.pop("timed_calls")
        entry["avg_duration_ms"] = _ms(entry["duration_ms"] / timed) if timed else None
    tokens_in, tokens_out = session["total_tokens_in"], session["total_tokens_out"]
    return {
        "session_id": session["session_id"],
        "agent_name": session["agent_name"],
        "status": session["status"],
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "total_tokens": tokens_in + tokens_out,
        "tokens_cache_read": session["total_tokens_cache_read"],
        "tokens_cache_write": session["total_tokens_cache_write"],
        "tokens_reasoning": session["total_tokens_reasoning"],
        "event_count": session["event_count"],
        "error_count": session["error_count"],
        "cost_usd": usd(session["cost_usd"]),
        "unpriced_calls": session["unpriced_calls"],
        "total_processing_ms": _ms(duration_sum),
        # Mean over the events that report a duration (lifecycle events usually do not).
        "avg_event_duration_ms": _ms(duration_sum / duration_count) if duration_count else 0.0,
        "session_duration_ms": session_duration_ms(session),
        "models": _by_count(models, lambda m: m["calls"]),
        "event_types": _by_count(event_types, lambda n: n),
        "tools": _by_count(tools, lambda t: t["calls"]),
        "metadata": loads_column(session["metadata"]),
    }
