"""Opening the store, for the entry points (CLI commands, the HTTP app).

The CLI and the web layer never import obsctl.store: they ask here for a store and hand it to
services, so which backend sits behind the seam is decided in one place.
"""

from __future__ import annotations

from typing import Any

from obsctl.store import Store
from obsctl.store import open_store as _open_store


def open_store(settings_or_url: Any, *, mode: str = "create", write_queue: int | None = None,
               write_timeout: float | None = None) -> Store:
    """The store for `settings_or_url` (see obsctl.store.open_store for the modes)."""
    return _open_store(settings_or_url, mode=mode, write_queue=write_queue, write_timeout=write_timeout)
