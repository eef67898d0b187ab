"""A server's background work on a connection of its own: one daemon thread doing a pass every
`interval` seconds until stopped (the idle sweep, the search indexer)."""

from __future__ import annotations

import logging
import threading
from typing import Self

from obsctl.store import Store, open_store

log = logging.getLogger("obsctl.background")


class BackgroundLoop:
    """Subclasses name their thread (`name`) and do one pass in `tick(store)`; a failing pass
    is logged and the next one retries."""

    name = "obsctl-background"

    def __init__(self, settings, interval: float):
        self.settings = settings
        self.interval = interval
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def tick(self, store: Store) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        store = open_store(self.settings, mode="attach")
        try:
            while not self._stopping.wait(self.interval):
                try:
                    self.tick(store)
                except Exception:  # keep going; the next pass retries
                    log.exception("%s failed", self.name)
        finally:
            store.close()
