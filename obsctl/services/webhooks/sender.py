"""The server's background webhook sender: one thread running delivery passes.

It sleeps until the earliest pending delivery is due (at most `poll_seconds`, so deliveries
queued by another process, such as a cron `obsctl alerts evaluate`, are picked up too), and
`wake()` makes it run at once (the evaluate route calls it after firing). `stop()` ends the
thread after the attempt in progress; it uses its own database connection.
"""

from __future__ import annotations

import logging
import threading

from obsctl.services.webhooks.delivery import ATTEMPT_TIMEOUT_S, deliver_due
from obsctl.store import open_store
from obsctl.timeutil import now, parse_ts

log = logging.getLogger("obsctl.webhooks")


class WebhookSender:
    """A stoppable background thread that keeps the webhook outbox moving."""

    def __init__(self, settings, *, poll_seconds: float = 5.0, timeout: float | None = None):
        self.settings = settings
        self.poll_seconds = poll_seconds
        self.timeout = timeout
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> WebhookSender:
        if not self.running:
            self._stopping.clear()
            self._thread = threading.Thread(target=self._run, name="obsctl-webhook-sender", daemon=True)
            self._thread.start()
        return self

    def wake(self) -> None:
        """Run a delivery pass now (e.g. right after alerts fired)."""
        self._wake.set()

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the current attempt; waits up to `timeout` seconds for the thread
        (default: the attempt deadline and a little more, so an attempt can finish)."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout if timeout is not None
                              else (self.timeout or ATTEMPT_TIMEOUT_S) + 2.0)
            self._thread = None

    def _run(self) -> None:
        store = open_store(self.settings, mode="attach")
        try:
            while not self._stopping.is_set():
                self._wake.clear()
                try:
                    deliver_due(store, self.settings, timeout=self.timeout,
                                should_stop=self._stopping.is_set)
                    wait = self._seconds_to_next(store)
                except Exception:  # keep the sender alive; the next pass retries
                    log.exception("webhook delivery pass failed")
                    wait = self.poll_seconds
                self._wake.wait(wait)
        finally:
            store.close()

    def _seconds_to_next(self, store) -> float:
        due = store.webhooks.next_due_at()
        if due is None:
            return self.poll_seconds
        seconds = (parse_ts(due) - now()).total_seconds()
        return min(self.poll_seconds, max(0.05, seconds))

