"""Session lifecycle: completing sessions that went idle.

OpenTelemetry has no "session end", and agents sending events often never send a
`session_end`. An active session is completed when

- it has a root event (one with no parent: the root span of a trace, which is exported only
  when it has ended; for events sent to POST /events, any event without a parent_id), so a
  trace whose root span is still running is never completed, and
- nothing happened for the idle timeout (OBSCTL_SESSION_IDLE_TIMEOUT, default 30 minutes):
  on the events' clocks, since the later of its last event and its latest root's end; and on
  the server's, since it last received an event (`last_seen_at`), so that neither a late span
  nor an agent clock running behind completes a session that is still sending.

Its status becomes `error` when that root event failed (an ERROR span status, its own or a
child's: `output_data.child_error`, see services/otlp/failures.py), else
`completed`; `ended_at` is the later of the root's end and the last event. It is marked idle-ended: an event
arriving later is stored as always and makes the session active again (the ingest upsert
reopens it), and the next sweep completes it again once idle. A `session_end` is final.

The sweep reads the active sessions by last activity on a partial index, a page at a time, and
each completion is a conditional UPDATE (still active, same last event), so several servers
and cron runs sweeping at once complete each session once. It runs in `obsctl serve` (a
background thread, `IdleSweeper`), and at the start of `alerts evaluate` and `prune`.
"""

from __future__ import annotations

import functools
from datetime import datetime, timedelta

from obsctl.services.background import BackgroundLoop
from obsctl.store import Store
from obsctl.timeutil import format_ts, parse_ts
from obsctl.timeutil import now as clock_now

PAGE = 500


def complete_idle_sessions(store: Store, idle_timeout: timedelta | None, *, at: datetime | None = None,
                           page_size: int = PAGE) -> int:
    """Complete the active sessions idle for `idle_timeout` (None: none); returns how many.
    Reads the candidates `page_size` at a time, each page's completions one transaction."""
    if idle_timeout is None:
        return 0
    at = at or clock_now()
    cutoff = format_ts(at - idle_timeout)
    completed = 0
    after = None
    while True:
        page = store.sessions.idle_candidates(cutoff, after, page_size)
        if not page:
            return completed
        after = (page[-1][1], page[-1][0])  # (last_event_at, session_id): the index's order
        roots = store.sessions.latest_roots([sid for sid, _ in page])
        endings = []
        for session_id, last_event_at in page:
            root = roots.get(session_id)
            if root is None:
                continue
            timestamp, duration_ms, is_error = root
            ended = parse_ts(timestamp) + timedelta(milliseconds=float(duration_ms or 0))
            ended = max(ended, parse_ts(last_event_at))
            if ended >= at - idle_timeout:
                continue  # the root ended less than the idle timeout ago
            endings.append(("error" if is_error else "completed", format_ts(ended), session_id, last_event_at,
                            cutoff))
        if endings:
            completed += store.run_write(functools.partial(_complete, endings=endings))
        if len(page) < page_size:
            return completed


def _complete(store: Store, endings: list[tuple]) -> int:
    with store.transaction():
        return store.sessions.complete_idle(endings)


class IdleSweeper(BackgroundLoop):
    """The server's background idle sweep: one thread, every `interval` seconds (at most a
    minute, at least a fifth of a second, about half the idle timeout), on its own connection."""

    name = "obsctl-idle-sweep"

    def __init__(self, settings, interval: float | None = None):
        idle = settings.session_idle_timeout
        seconds = idle.total_seconds() if idle is not None else 60.0
        super().__init__(settings, interval if interval is not None else min(60.0, max(0.2, seconds / 2)))

    def start(self) -> IdleSweeper:
        """Start sweeping (nothing to do when idle sessions are never completed)."""
        if self.settings.session_idle_timeout is None:
            return self
        return super().start()

    def tick(self, store: Store) -> None:
        complete_idle_sessions(store, self.settings.session_idle_timeout)
