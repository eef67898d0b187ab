"""Merging a batch's session_start and session_end updates into one per session, with the
effect of applying them in order: the same rule for every backend's ingest."""

from __future__ import annotations

from collections.abc import Iterable


def last_per_session(updates: Iterable[tuple], merge) -> list[tuple]:
    """One update per session (its id last in each tuple) with the effect of applying all of
    `updates` in order, one after the other: `merge(earlier, later)` combines two."""
    merged: dict[str, tuple] = {}
    for update in updates:
        session_id = update[-1]
        earlier = merged.get(session_id)
        merged[session_id] = update if earlier is None else merge(earlier, update)
    return list(merged.values())


def merge_start(earlier: tuple, later: tuple) -> tuple:
    # The later agent; the later metadata unless it has none; the earliest start.
    agent, metadata, ts, session_id = later
    return (agent, earlier[1] if metadata is None else metadata, min(earlier[2], ts), session_id)


def merge_end(earlier: tuple, later: tuple) -> tuple:
    # The later end and status; each final token count from the later end unless it has none.
    ended_at, status, final_in, final_out, session_id = later
    return (ended_at, status, earlier[2] if final_in is None else final_in,
            earlier[3] if final_out is None else final_out, session_id)
