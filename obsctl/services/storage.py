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
    """The store for `settings_or_url` (see obsctl.store.open_store for the modes). A store opened
    from Settings costs what it ingests with their price table (`OBSCTL_PRICES`)."""
    store = _open_store(settings_or_url, mode=mode, write_queue=write_queue, write_timeout=write_timeout)
    # Read when the first event is costed (services/pricing.pricer_of), so that a bad file
    # stops ingest with its message and leaves every read working.
    store.prices_path = getattr(settings_or_url, "prices_path", None)
    return store
