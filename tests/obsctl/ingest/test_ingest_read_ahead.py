"""The read-ahead of `obsctl ingest`: batches validated on a reader thread while the previous
ones are written, in order, bounded, errors in place, and no hang when the writer stops."""

from __future__ import annotations

import threading
import time

import pytest

from obsctl.errors import InvalidInput
from obsctl.services.ingest import stream
from obsctl.services.ingest.stream import READ_AHEAD, _read_ahead


@pytest.fixture
def no_prepare(monkeypatch):
    # These tests pass plain dicts through; what a batch writes is not their subject.
    monkeypatch.setattr(stream, "prepare_batch", lambda valid: len(valid))


def _validate(raw):
    return [{"n": r["n"]} for r in raw], []


def _records(count, *, then=None):
    for i in range(count):
        yield i + 1, {"n": i}
    if then is not None:
        then()


def test_batches_arrive_in_order_with_nothing_lost(no_prepare):
    got = [v for valid, _, _ in _read_ahead(_records(2_345), 100, _validate) for v in valid]
    assert [v["n"] for v in got] == list(range(2_345))


def test_the_reader_stays_at_most_read_ahead_batches_ahead(no_prepare):
    read = []

    def records():
        for i in range(5_000):
            read.append(i)
            yield i + 1, {"n": i}

    batches = _read_ahead(records(), 100, _validate)
    next(batches)
    time.sleep(0.3)  # the reader runs ahead while the caller "writes"
    # the batch handed out, READ_AHEAD waiting, one being built, and no more
    assert len(read) <= (1 + READ_AHEAD + 1) * 100 + 1
    assert len(list(batches)) == 49


def test_an_error_while_reading_comes_after_the_batches_read_before_it(no_prepare):
    def fail():
        raise InvalidInput("line 301: not JSON")

    seen = []
    with pytest.raises(InvalidInput, match="line 301"):
        for valid, _, _ in _read_ahead(_records(300, then=fail), 100, _validate):
            seen.extend(valid)
    assert len(seen) == 300


def test_a_writer_that_stops_does_not_wait_for_a_reader_blocked_on_its_input(no_prepare):
    never = threading.Event()
    batches = _read_ahead(_records(150, then=lambda: never.wait(10)), 100, _validate)
    next(batches)
    started = time.monotonic()
    batches.close()  # what a write error does to the loop over the batches
    assert time.monotonic() - started < 1
    never.set()


def test_ingest_stream_reports_rejects_and_stores_across_read_ahead_batches(db):
    records = [(i + 1, {"session_id": f"s{i % 7}", "event_id": f"e{i}", "tokens_in": i})
               for i in range(2_500)]
    records[1_234] = (1_235, {"session_id": "s1", "tokens_in": "many"})
    rejected = []
    summary = stream.ingest_stream(db, iter(records), batch_size=100,
                                   on_reject=lambda loc, msg: rejected.append(loc))
    assert rejected == [1_235]
    assert (summary.events, summary.stored, summary.rejected) == (2_499, 2_499, 1)
    assert db.conn.execute("SELECT SUM(total_tokens_in) FROM sessions").fetchone()[0] == \
        sum(range(2_500)) - 1_234
