"""Compare two sessions (spec 2.4): per-session summaries, deltas of B against A, shared keys."""

from __future__ import annotations

from typing import Any

from obsctl.errors import InvalidInput
from obsctl.services.sessions import require_session
from obsctl.services.sessions.summary import session_summary
from obsctl.store import Store
from obsctl.timeutil import now_iso

# Delta key -> field of the per-session summary it is computed from.
DELTA_FIELDS = {
    "total_tokens": "total_tokens",
    "tokens_in": "tokens_in",
    "tokens_out": "tokens_out",
    "tokens_cache_read": "tokens_cache_read",
    "tokens_cache_write": "tokens_cache_write",
    "tokens_reasoning": "tokens_reasoning",
    "event_count": "event_count",
    "error_count": "error_count",
    "total_processing_ms": "total_processing_ms",
    "avg_event_duration_ms": "avg_event_duration_ms",
    # Wall clock: started_at to ended_at (to the last event while active).
    "session_duration_ms": "session_duration_ms",
}


def delta(a: float | None, b: float | None) -> dict:
    """B relative to A: `absolute` = B - A; `percent` = (B - A) / A x 100, null when A is 0.
    Both are null when either side is unknown (a session without events has no duration)."""
    if a is None or b is None:
        return {"absolute": None, "percent": None}
    absolute = b - a
    if isinstance(absolute, float):
        absolute = round(absolute, 3)
    percent = round((b - a) / a * 100, 2) if a else None
    return {"absolute": absolute, "percent": percent}


def cost_delta(a: float | None, b: float | None) -> dict:
    """B's cost relative to A's (8 decimals); both null when either has no priced call."""
    found = delta(a, b)
    if found["absolute"] is not None and a is not None and b is not None:
        found["absolute"] = round(b - a, 8)
    return found


def model_latency(models_a: dict, models_b: dict) -> dict:
    """Each model either session called: its mean call duration in A and in B (null where that
    session did not call it, or no call reported a duration) and B's delta against A."""
    latency = {}
    for model in sorted(models_a.keys() | models_b.keys()):
        a = (models_a.get(model) or {}).get("avg_duration_ms")
        b = (models_b.get(model) or {}).get("avg_duration_ms")
        latency[model] = {"a_avg_ms": a, "b_avg_ms": b, **delta(a, b)}
    return latency


def parse_compare_body(body: Any) -> tuple[str, str]:
    """The (session_a, session_b) ids of a `POST /sessions/compare` body."""
    if not isinstance(body, dict):
        raise InvalidInput('request body must be a JSON object: {"session_a": "...", "session_b": "..."}')
    ids = []
    for name in ("session_a", "session_b"):
        value = body.get(name)
        if value is None:
            raise InvalidInput(f"{name} is required (a session id)")
        if not isinstance(value, str) or not value:
            raise InvalidInput(f"{name} must be a non-empty string (a session id)")
        ids.append(value)
    return ids[0], ids[1]


def compare_sessions(store: Store, session_a: str, session_b: str) -> dict:
    """Compare session B against baseline A. Unknown ids raise NotFound; A may equal B."""
    a = session_summary(store, require_session(store, session_a))
    b = session_summary(store, require_session(store, session_b))
    return {
        "compared_at": now_iso(),
        "session_a": a,
        "session_b": b,
        "deltas": {**{key: delta(a[f], b[f]) for key, f in DELTA_FIELDS.items()},
                   "cost_usd": cost_delta(a["cost_usd"], b["cost_usd"])},
        "model_latency": model_latency(a["models"], b["models"]),
        "shared": {
            "event_types": sorted(a["event_types"].keys() & b["event_types"].keys()),
            "tools": sorted(a["tools"].keys() & b["tools"].keys()),
            "models": sorted(a["models"].keys() & b["models"].keys()),
        },
    }
