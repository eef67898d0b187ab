"""Finding one stored session: shared by the sessions use cases and housekeeping (which the
sessions package imports, so it cannot import the package back)."""

from __future__ import annotations

from obsctl.errors import NotFound
from obsctl.store import Store


def require_session(store: Store, session_id: str) -> dict:
    """The stored session row, or NotFound."""
    row = store.sessions.get_session(session_id)
    if row is None:
        raise NotFound(f"session {session_id!r} not found")
    return row
