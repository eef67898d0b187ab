"""Sessions: list and detail."""

from __future__ import annotations

from typing import Any

from obsctl.errors import InvalidInput
from obsctl.jsonutil import describe_value, loads_column
from obsctl.models.sessions import SESSION_EVENTS_LIMIT
from obsctl.params import MAX_COUNT, IntParam
from obsctl.services.pricing import usd
from obsctl.services.sessions.lookup import require_session  # noqa: F401 (re-exported)
from obsctl.store import Store
from obsctl.vocabulary import SESSION_STATUSES

LIMIT = IntParam("limit", 1, 200, default=50, capped=True)  # spec: "capped at 200"
OFFSET = IntParam("offset", 0, MAX_COUNT, default=0)
# A session's events in one answer: all of them up to this count (the spec's "all events"),
# beyond it a page with a `next` cursor (docs/decisions.md); declared with GET /sessions/{id}.
EVENTS_LIMIT = SESSION_EVENTS_LIMIT
_JSON_EVENT_FIELDS = ("input_data", "output_data", "tool_call", "decision_trace", "metadata")


def session_view(row: dict, tags: dict[str, str] | None = None) -> dict:
    """The public form of a session record (spec 2.2 plus event and error counts, what its
    calls cost, and its tags)."""
    return {
        "session_id": row["session_id"],
        "agent_name": row["agent_name"],
        "started_at": row["started_at"],
        "ended_at": row["ended_at"],
        "metadata": loads_column(row["metadata"]),
        "total_tokens_in": row["total_tokens_in"],
        "total_tokens_out": row["total_tokens_out"],
        "total_tokens_cache_read": row["total_tokens_cache_read"],
        "total_tokens_cache_write": row["total_tokens_cache_write"],
        "total_tokens_reasoning": row["total_tokens_reasoning"],
        "status": row["status"],
        "event_count": row["event_count"],
        "error_count": row["error_count"],
        "cost_usd": usd(row["cost_usd"]),
        "unpriced_calls": row["unpriced_calls"],
        "background": bool(row["background"]),
        "tags": tags or {},
    }


def event_view(row: dict) -> dict:
    """The public form of a stored event, JSON fields as objects."""
    view = {
        "event_id": row["event_id"],
        "session_id": row["session_id"],
        "event_type": row["event_type"],
        "timestamp": row["timestamp"],
        "model": row["model"],
        "tokens_in": row["tokens_in"],
        "tokens_out": row["tokens_out"],
        "tokens_cache_read": row["tokens_cache_read"],
        "tokens_cache_write": row["tokens_cache_write"],
        "tokens_reasoning": row["tokens_reasoning"],
        "duration_ms": row["duration_ms"],
        "cost_usd": usd(row["cost_usd"]),
    }
    for name in _JSON_EVENT_FIELDS:
        view[name] = loads_column(row[name])
    view["agent_name"] = row["agent_name"]
    view["is_error"] = bool(row["is_error"])
    view["parent_id"] = row["parent_id"]
    return view


def check_status(status: str | None) -> str | None:
    """A session status filter (None: any), else InvalidInput naming the statuses."""
    if status is not None and status not in SESSION_STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(SESSION_STATUSES)}; got {describe_value(status)}")
    return status


def list_sessions(store: Store, *, limit: int | None = None, offset: int | None = None,
                  cursor: str | None = None, **filters: Any) -> dict:
    """`{"sessions": [...], "total": N, "next": cursor}`: the sessions `filters` match (agent,
    status, model, tool, error_type, since/from/to, min_/max_tokens, min_/max_cost, has_errors, tag,
    metadata; services/sessions/filters.py) in their `sort` (default newest first). `total`
    counts every match; `next` continues after this page (null on the last one). `offset` and
    `cursor` are two ways to a later page: a non-zero offset with a cursor is refused."""
    from obsctl.services.sessions.filters import decode_cursor, encode_cursor, session_filter

    selection = session_filter(**filters)
    limit = LIMIT.resolve(limit)
    offset = OFFSET.resolve(offset)
    if cursor is not None and offset:
        raise InvalidInput("give cursor or offset, not both (the cursor already says where the page starts)")
    after = decode_cursor(selection, cursor)
    rows, total = store.sessions.list_sessions(selection, limit=limit + 1, offset=offset, after=after)
    more = len(rows) > limit
    rows = rows[:limit]
    found = store.sessions.session_tags([r["session_id"] for r in rows]) if rows else {}
    return {"sessions": [session_view(r, found.get(r["session_id"])) for r in rows], "total": total,
            "next": encode_cursor(selection, rows[-1]) if more else None}


def get_session(store: Store, session_id: str, *, tree: bool = False, limit: int | None = None,
                cursor: str | None = None) -> dict:
    """A session with its tags, its scores and its events in time order: all of them up to
    EVENTS_LIMIT, else the first `limit` and `next`, the cursor of the page after them (null
    on the last page). With `tree`, `events` holds the roots of the span tree of the page's
    events, each with `self_time_ms` and its `children` (services/sessions/tree.py)."""
    from obsctl.services.sessions.housekeeping import session_scores
    from obsctl.services.sessions.tree import build_tree

    limit = EVENTS_LIMIT.resolve(limit)
    after = decode_event_cursor(cursor)
    tags = store.sessions.session_tags([session_id]).get(session_id)
    view = session_view(require_session(store, session_id), tags)
    view["scores"] = session_scores(store, session_id)
    rows = store.sessions.session_events_page(session_id, after, limit + 1)
    more = len(rows) > limit
    rows = rows[:limit]
    events = [event_view(e) for _, e in rows]
    view["events"] = build_tree(events) if tree else events
    view["next"] = encode_event_cursor(rows[-1]) if more else None
    return view


def encode_event_cursor(row: tuple[int, dict]) -> str:
    """The cursor of the page of a session's events after `row` ((id, event) of the store)."""
    from obsctl.services.sessions.filters import cursor_of

    return cursor_of(["events", row[1]["timestamp"], row[0]])


def decode_event_cursor(cursor: Any) -> tuple[str, int] | None:
    """(timestamp, id) of a cursor encode_event_cursor made, else InvalidInput."""
    from obsctl.services.sessions.filters import key_of

    if cursor is None:
        return None
    bad = InvalidInput(f"cursor is not one this session's events gave (pass the `next` of the previous "
                       f"page unchanged); got {describe_value(cursor)}")
    key = key_of(cursor, bad)
    if (type(key) is not list or len(key) != 3 or key[0] != "events" or type(key[1]) is not str
            or "\x00" in key[1] or type(key[2]) is not int or not 0 <= key[2] < 2**63):
        raise bad
    return key[1], key[2]


def agent_names(store: Store, prefix: str = "", limit: int = 100) -> list[str]:
    """Up to `limit` agent names that start with `prefix`, in order (shell completion)."""
    return store.sessions.agent_names(prefix, limit)


def session_ids(store: Store, prefix: str = "", limit: int = 100) -> list[str]:
    """Up to `limit` session ids that start with `prefix`, in order (shell completion)."""
    return store.sessions.session_ids(prefix, limit)
