"""Keeping the search index complete after ingest (issue 35).

On SQLite the ingest transaction no longer writes the search index: events are indexed after
they are committed, a batch at a time (store/sqlite/search.py `index_pending`), so ingest is
acknowledged sooner and the index is written in larger, cheaper batches. Nothing is ever left
out: `catch_up` indexes whatever the index has not reached, and runs before every search, at
the end of a CLI ingest, and in the server's background indexer (`SearchIndexer`), which keeps
the index within a second or so of what was stored. On PostgreSQL the index is a generated
column written with each row, and there is never anything to catch up.
"""

from __future__ import annotations

import logging

from obsctl.errors import ObsctlError
from obsctl.services.background import BackgroundLoop
from obsctl.store import Store, open_store

log = logging.getLogger("obsctl.search")
# Seconds between two looks of the background indexer at what was stored.
INDEX_INTERVAL_S = 0.5
# Events indexed per write transaction: a search or a CLI ingest catching up, and the server's
# indexer (smaller: the server's writer waits for the write lock while a batch holds it, a few
# tens of milliseconds).
BATCH = 5_000
BACKGROUND_BATCH = 2_000


def catch_up(store: Store, batch: int = BATCH) -> int:
    """Index every stored event the index has not reached, a batch per write transaction;
    returns how many events were passed over (0 when it was complete). A store opened
    read-only (`obsctl search`) catches up through a writable connection of its own when the
    index is behind (a writer that stopped before indexing what it stored); on read-only
    storage, where nothing can be written, it searches what is indexed."""
    if not store.search.pending():
        return 0
    if store.readonly:
        return _catch_up_writable(store)
    moved = 0
    while True:
        done = store.run_write(lambda unit: unit.search.index_pending(batch))
        if not done:
            return moved
        moved += done


def _catch_up_writable(store: Store) -> int:
    path = getattr(store, "path", None)
    if path is None:
        return 0
    try:
        writable = open_store(path, mode="existing")
    except ObsctlError:  # read-only storage: nothing can be indexed here
        log.warning("the search index of %s is behind and cannot be written here", path)
        return 0
    try:
        return catch_up(writable)
    finally:
        writable.close()


class SearchIndexer(BackgroundLoop):
    """The server's background indexer: one thread that catches the index up every
    INDEX_INTERVAL_S seconds, on a connection of its own (as the idle sweep): its batches
    take the write lock between the writer's transactions and never a place in the writer
    queue, whose bound is the clients' (a full queue answers 503). A failed pass is retried
    by the next one, or by a search."""

    name = "obsctl-search-index"

    def __init__(self, settings, interval: float = INDEX_INTERVAL_S):
        super().__init__(settings, interval)

    def tick(self, store: Store) -> None:
        catch_up(store, BACKGROUND_BATCH)
