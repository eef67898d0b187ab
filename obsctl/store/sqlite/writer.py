"""The server's writer: one bounded queue through which every write of a served app passes.

Request threads never wait for SQLite's write lock themselves. They put their write in the
queue and wait, up to the write timeout, for its outcome; the writer thread does the writes in
order. So while another process holds the database's write lock for a long time, at most
`capacity` request threads wait (the server has that many threads more than it needs for
reads), a write that finds the queue full is refused at once (503, Retry-After), and one whose
deadline passes before it started is withdrawn (503): reads never queue behind writers.

Two kinds of writes:
- `run(work)`: `work(db)` runs on the writer's own connection. Such writes that queued
  together are committed in one transaction (each in a savepoint, so one that fails is undone
  alone); each request is answered only after that commit. Used by ingest (POST /events,
  OTLP), where batches arrive together.
- `turn()`: for every other write (`write_transaction` on a pool connection). The request
  thread waits for its turn; the writer pauses while that thread runs its own transaction.

A write that has started always finishes (commit or error) before its request is answered:
a 503 for a timeout means nothing was stored.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from obsctl.errors import ObsctlError, ServiceUnavailable, StorageFull
from obsctl.store.sqlite.sqlite_errors import is_busy, translate

log = logging.getLogger("obsctl.writer")

# The writer asks for SQLite's write lock in slices this long, so that between attempts it can
# drop writes whose requests gave up.
LOCK_POLL_MS = 50
# Most writes committed in one transaction.
MAX_GROUP = 32

_QUEUED, _RUNNING, _DONE, _WITHDRAWN = "queued", "running", "done", "withdrawn"


class WriterBusy(ServiceUnavailable):
    """The write queue is full or the write did not start before its deadline (HTTP 503)."""


class _Write:
    __slots__ = ("work", "deadline", "state", "result", "error", "started", "finished")

    def __init__(self, work: Callable | None, deadline: float):
        self.work = work  # None for a turn
        self.deadline = deadline
        self.state = _QUEUED
        self.result: Any = None
        self.error: BaseException | None = None
        self.started = threading.Event()
        self.finished = threading.Event()

    def perform(self, db: Any) -> Any:
        """Run the write's work on the writer's connection (a turn has none to run)."""
        if self.work is None:
            raise RuntimeError("a turn has no work to run")
        return self.work(db)


class WriteQueue:
    """A writer thread for the database at `path` (started on first use)."""

    def __init__(self, path: str | Path, *, capacity: int, timeout: float,
                 connect: Callable[[str | Path], Any]):
        self.path = path
        self.capacity = capacity
        self.timeout = timeout
        self._connect = connect
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._queue: deque[_Write] = deque()
        self._pending = 0  # admitted and not yet finished or withdrawn
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.commits = 0  # transactions committed by the writer thread (ingest writes)

    # Request threads ---------------------------------------------------------------------

    @property
    def pending(self) -> int:
        return self._pending

    def run(self, work: Callable[[Any], Any]) -> Any:
        """Run `work(db)` inside a write transaction on the writer thread; return its result
        once committed, or raise its error (nothing of it stored)."""
        write = self._admit(work)
        if not write.finished.wait(max(0.0, write.deadline - time.monotonic())):
            self._withdraw_or_wait(write)
        if write.error is not None:
            raise write.error
        return write.result

    @contextmanager
    def turn(self) -> Iterator[float]:
        """Wait for the calling thread's turn to write; yields the deadline (time.monotonic())
        by which it should have its transaction started. The writer waits until it is done."""
        write = self._admit(None)
        if not write.started.wait(max(0.0, write.deadline - time.monotonic())):
            self._withdraw_or_wait(write, event=write.started)
        try:
            yield write.deadline
        finally:
            self._finish(write)

    def _admit(self, work: Callable | None) -> _Write:
        write = _Write(work, time.monotonic() + self.timeout)
        with self._lock:
            if self._stopping:
                raise WriterBusy("the server is shutting down; retry against another instance")
            if self._pending >= self.capacity:
                raise WriterBusy(f"too many writes waiting for the database ({self._pending}); "
                                 f"retry after the time in Retry-After")
            self._pending += 1
            self._queue.append(write)
            self._wake.notify()
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="obsctl-writer", daemon=True)
                self._thread.start()
        return write

    def _withdraw_or_wait(self, write: _Write, event: threading.Event | None = None) -> None:
        """The deadline passed: withdraw a write that has not started (503), else wait for it."""
        with self._lock:
            if write.state == _QUEUED:
                write.state = _WITHDRAWN
                self._pending -= 1
                raise WriterBusy(
                    f"the database stayed busy for {self.timeout:g} s (another process may hold "
                    f"its write lock); nothing was stored, retry later", retry_after=2)
        (event or write.finished).wait()

    # The writer thread ---------------------------------------------------------------------

    def _serve(self) -> None:
        db = None
        try:
            db = self._open()
            while True:
                with self._lock:
                    while not self._queue and not self._stopping:
                        self._wake.wait()
                    if not self._queue:
                        return
                    batch = self._take()
                try:
                    if batch[0].work is None:
                        self._grant(batch[0])
                    else:
                        self._commit_together(db, batch)
                except Exception as exc:
                    self._abandon(batch, exc)
                    raise
                if any(isinstance(w.error, StorageFull) for w in batch):
                    # SQLite's FTS5 (the search index) keeps a failed write's error on the
                    # connection: once space is freed, only a new connection writes again.
                    db.close()
                    db = None
                    db = self._open()
        except Exception as exc:  # cannot open the database, or a bug: fail what waits, not hang it
            log.exception("the database writer stopped")
            with self._lock:
                self._thread = None  # the next write starts a new writer
            self._fail_all(ServiceUnavailable(f"the database writer stopped ({exc}); see the server log"))
        finally:
            if db is not None:
                db.close()

    def _open(self):
        db = self._connect(self.path)
        db.conn.execute(f"PRAGMA busy_timeout = {LOCK_POLL_MS}")
        # The writer's connection runs only ingest writes (store/sqlite/ingest.write_batch, OTLP),
        # which upsert an event's session before the event in the same transaction and
        # delete a session only once no event is left in it: the foreign-key check could
        # never fail there, and it cost a quarter of the event insert. Every other
        # connection keeps foreign keys on (ON DELETE CASCADE of retention and `db purge`).
        db.conn.execute("PRAGMA foreign_keys = OFF")
        return db

    def _take(self) -> list[_Write]:
        """A turn alone, or the ingest write at the head of the queue (others join it in
        `_begin`)."""
        return [self._queue.popleft()]

    def _grant(self, write: _Write) -> None:
        with self._lock:
            if write.state != _QUEUED:
                return
            write.state = _RUNNING
        write.started.set()
        write.finished.wait()

    def _start(self, write: _Write) -> bool:
        with self._lock:
            if write.state != _QUEUED:
                return False
            write.state = _RUNNING
            return True

    def _finish(self, write: _Write) -> None:
        with self._lock:
            if write.state == _RUNNING:
                write.state = _DONE
                self._pending -= 1
        write.finished.set()

    def _commit_together(self, db, writes: list[_Write]) -> None:
        conn = db.conn
        if not self._begin(conn, writes):
            return
        running = [w for w in writes if self._start(w)]
        if not running:
            conn.execute("ROLLBACK")
            return
        succeeded: list[_Write] = []
        broken = False
        for write in running:
            try:
                with db.atomic():
                    write.result = write.perform(db)
                succeeded.append(write)
            except ObsctlError as exc:
                write.error = exc
                if getattr(exc, "database_fault", False):
                    broken = True  # a database error (translated by the store) may have undone all
                    break
                # else this request's own problem; the others go on
            except Exception as exc:  # a database error may have undone the whole transaction
                write.error = translate(exc)
                broken = True
                break
        if not broken:
            try:
                conn.execute("COMMIT")
                self.commits += 1
            except sqlite3.Error as exc:
                broken = True
                if len(running) == 1:
                    running[0].result = None
                    running[0].error = translate(exc)
        if broken:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            redo = [w for w in running if w.error is None or not isinstance(w.error, ObsctlError)
                    or getattr(w.error, "database_fault", False)]
            if len(running) > 1:
                # Which write caused it is unknown (disk full at COMMIT): each again, alone.
                for write in redo:
                    write.error = write.result = None
                    self._commit_alone(db, write)
        for write in running:
            self._finish(write)

    def _commit_alone(self, db, write: _Write) -> None:
        conn = db.conn
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    write.error = translate(exc)
                    return
                if time.monotonic() > write.deadline:
                    write.error = WriterBusy("the database stayed busy; nothing was stored, retry later",
                                             retry_after=2)
                    return
        try:
            with db.atomic():
                write.result = write.perform(db)
            conn.execute("COMMIT")
            self.commits += 1
        except Exception as exc:
            write.result = None
            write.error = translate(exc)
            if conn.in_transaction:
                conn.execute("ROLLBACK")

    def _begin(self, conn: sqlite3.Connection, writes: list[_Write]) -> bool:
        """Take SQLite's write lock; False when every write was withdrawn meanwhile. Ingest
        writes queued while it waits join `writes`."""
        while True:
            if all(w.state != _QUEUED for w in writes):
                return False
            try:
                conn.execute("BEGIN IMMEDIATE")
                self._join_queued(writes)
                return True
            except sqlite3.OperationalError as exc:
                if is_busy(exc):
                    self._join_queued(writes)
                    continue
                for write in writes:
                    if self._start(write):
                        write.error = translate(exc)
                        self._finish(write)
                return False

    def _join_queued(self, writes: list[_Write]) -> None:
        with self._lock:
            while self._queue and self._queue[0].work is not None and len(writes) < MAX_GROUP:
                writes.append(self._queue.popleft())

    def _abandon(self, writes: list[_Write], exc: Exception) -> None:
        """Answer the writes of a batch the writer could not finish (their transaction is
        rolled back with the connection)."""
        error = ServiceUnavailable(f"the database writer failed ({exc}); nothing was stored")
        with self._lock:
            for write in writes:
                if write.state in (_QUEUED, _RUNNING):
                    if write.state == _QUEUED:
                        write.state = _RUNNING
                    write.error = error
        for write in writes:
            if write.error is error:
                write.result = None
                write.started.set()
                self._finish(write)

    def _fail_all(self, error: BaseException) -> None:
        with self._lock:
            queued = list(self._queue)
            self._queue.clear()
        for write in queued:
            if self._start(write):
                write.error = error
                write.started.set()
                self._finish(write)

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the writes already queued, then end the thread (new writes are refused)."""
        with self._lock:
            self._stopping = True
            self._wake.notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

