"""The server's writer queue: writes of concurrent requests go through one writer thread,
reads never wait behind them, a full queue or a passed deadline is a 503 with Retry-After,
and writes committed together still get exact, independent results."""

from __future__ import annotations

import itertools
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
import requests

from obsctl.errors import InvalidInput, ServiceUnavailable, StorageFull
from obsctl.services.ingest import ingest_events
from obsctl.store.sqlite.db import WRITER_ATTR, ConnectionPool, connect
from obsctl.store.sqlite.sqlite_store import SqliteStore
from obsctl.store.sqlite.writer import WriteQueue, WriterBusy
from tests.conftest import event

HOLD_LOCK = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""


def hold_write_lock(db_path, seconds: float) -> subprocess.Popen:
    """Another process takes the database's write lock for `seconds` (returns once it has it)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(db_path), str(seconds)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    return holder


def batch(name: str, n: int = 20, **fields) -> dict:
    return {"events": [event(name, event_id=f"{name}-{i}", tokens_in=1, **fields) for i in range(n)]}


def post_all(url: str, names: list[str]) -> dict[str, tuple[int, float, requests.Response]]:
    """POST one batch per name at the same time; name -> (status, seconds, response)."""
    results = {}

    def post(name):
        started = time.monotonic()
        r = requests.post(f"{url}/events", json=batch(name), timeout=30)
        results[name] = (r.status_code, time.monotonic() - started, r)

    threads = [threading.Thread(target=post, args=(n,)) for n in names]
    for t in threads:
        t.start()
    return results, threads


def poll_reads(url: str, until: threading.Event, latencies: list, failures: list) -> None:
    with requests.Session() as http:
        while not until.is_set():
            for path in ("/health", "/sessions", "/sessions/seed"):
                started = time.monotonic()
                r = http.get(f"{url}{path}", timeout=10)
                latencies.append(time.monotonic() - started)
                if r.status_code != 200:
                    failures.append((path, r.status_code))
            time.sleep(0.02)


def stored_sessions(db_path) -> dict[str, tuple[int, int]]:
    conn = sqlite3.connect(db_path)
    try:
        return {s: (n, t) for s, n, t in conn.execute(
            "SELECT session_id, event_count, total_tokens_in FROM sessions")}
    finally:
        conn.close()


def test_reads_answer_at_once_while_another_process_holds_the_write_lock(live_server, db_path):
    server = live_server({"OBSCTL_RATE_LIMITS": "off", "OBSCTL_WRITE_TIMEOUT": "8"}, threads=4)
    assert requests.post(f"{server.url}/events", json=batch("seed"), timeout=10).status_code == 200
    latencies, failures, done = [], [], threading.Event()
    reader = threading.Thread(target=poll_reads, args=(server.url, done, latencies, failures))
    holder = hold_write_lock(db_path, 3)
    reader.start()
    try:
        # 10 writers at once; the queue takes 4 (as many as --threads), the rest are refused.
        results, posters = post_all(server.url, [f"w{i}" for i in range(10)])
        for t in posters:
            t.join()
    finally:
        holder.wait(timeout=30)
        done.set()
        reader.join()

    assert failures == []
    assert len(latencies) > 30
    assert max(latencies) < 0.5, sorted(latencies)[-5:]
    refused = {n for n, (status, _, _) in results.items() if status == 503}
    accepted = {n for n, (status, _, _) in results.items() if status == 200}
    assert len(accepted) == 4 and len(refused) == 6, {n: r[0] for n, r in results.items()}
    for name in refused:
        status, seconds, response = results[name]
        assert seconds < 1.0  # at once, not after waiting
        assert response.headers["Retry-After"] == "1"
        assert "too many writes waiting" in response.json()["error"]
    for name in accepted:
        status, seconds, response = results[name]
        assert seconds >= 2.0  # waited for the other process, then stored
        assert response.json() == {"status": "ok", "processed": 20, "duplicates": 0}
    sessions = stored_sessions(db_path)
    assert {s for s in sessions if s.startswith("w")} == accepted
    assert all(sessions[s] == (20, 20) for s in accepted)


def test_a_write_that_cannot_start_before_its_deadline_is_a_503_and_stores_nothing(live_server, db_path):
    server = live_server({"OBSCTL_RATE_LIMITS": "off", "OBSCTL_WRITE_TIMEOUT": "1"}, threads=4)
    holder = hold_write_lock(db_path, 4)
    try:
        results, posters = post_all(server.url, ["late-1", "late-2"])
        started = time.monotonic()
        rule = requests.post(f"{server.url}/alerts/rules", timeout=10, json={
            "name": "late rule", "metric": "error_rate", "operator": ">", "threshold": 5,
            "window_minutes": 60})
        rule_seconds = time.monotonic() - started
        for t in posters:
            t.join()
        assert requests.get(f"{server.url}/health", timeout=5).status_code == 200
    finally:
        holder.wait(timeout=30)
    for status, seconds, response in results.values():
        assert status == 503, response.text
        assert 0.9 < seconds < 2.5  # the deadline, never a hang
        assert int(response.headers["Retry-After"]) >= 1
        assert "nothing was stored" in response.json()["error"]
    assert rule.status_code == 503 and rule_seconds < 2.5, rule.text
    assert "Retry-After" in rule.headers
    # Once the lock is free the withdrawn writes never happen; new ones do.
    time.sleep(0.5)
    assert "late-1" not in stored_sessions(db_path)
    assert requests.get(f"{server.url}/alerts/rules", timeout=5).json()["total"] == 0
    again = requests.post(f"{server.url}/events", json=batch("late-1"), timeout=10)
    assert again.json() == {"status": "ok", "processed": 20, "duplicates": 0}
    assert stored_sessions(db_path)["late-1"] == (20, 20)


# The queue itself, in process: writes queued together are committed together.

@pytest.fixture
def pool(db_path):
    pools = []

    def make(**kwargs):
        p = ConnectionPool(db_path, **kwargs)
        pools.append(p)
        return p

    yield make
    for p in pools:
        p.close_all()


def run_together(writer, db_path, works: list) -> list:
    """Call `works` (writes through `writer`) from threads while another connection holds the
    write lock, so that they all queue; then release it. Returns their results or errors."""
    blocker = sqlite3.connect(db_path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    outcomes: list = [None] * len(works)

    def submit(i):
        try:
            outcomes[i] = works[i]()
        except Exception as exc:  # noqa: BLE001 (the outcome under test)
            outcomes[i] = exc

    threads = [threading.Thread(target=submit, args=(i,)) for i in range(len(works))]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 5
    while writer.pending < len(works) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert writer.pending == len(works), outcomes
    blocker.execute("COMMIT")
    blocker.close()
    for t in threads:
        t.join()
    return outcomes


def test_batches_queued_together_share_a_commit_and_keep_exact_counts(pool, db_path):
    p = pool(write_queue=8)
    # Overlapping ids: the second and third batches repeat events of the first.
    a = [event("s", event_id=f"e{i}", tokens_in=1) for i in range(10)]
    b = [event("s", event_id=f"e{i}", tokens_in=1) for i in range(5, 15)]
    c = [event("s", event_id=f"e{i}", tokens_in=1) for i in range(0, 20)]

    def stores_then_fails(wdb):
        ingest_events(SqliteStore.over(wdb), [event("bad", event_id="bad-1")])
        raise InvalidInput("refused after writing")

    works = [lambda evs=evs: ingest_events(SqliteStore.over(p.get()), evs) for evs in (a, b)]
    works.append(lambda: p.writer.run(stores_then_fails))
    works.append(lambda: ingest_events(SqliteStore.over(p.get()), c))
    before = p.writer.commits
    results = run_together(p.writer, db_path, works)
    assert p.writer.commits - before == 1  # one transaction for all four
    assert isinstance(results[2], InvalidInput)
    assert "bad" not in stored_sessions(db_path)  # its savepoint was undone alone
    # Each batch's duplicates are exactly those stored before it, in some order of the three.
    counts = [(r.processed, r.duplicates) for r in (results[0], results[1], results[3])]
    serial_orders = []
    for order in itertools.permutations(range(3)):
        seen, outcome = set(), [None] * 3
        for i in order:
            ids = [e["event_id"] for e in (a, b, c)[i]]
            outcome[i] = (len(ids), len(set(ids) & seen))
            seen.update(ids)
        serial_orders.append(outcome)
    assert counts in serial_orders
    assert sum(processed - duplicates for processed, duplicates in counts) == 20
    assert stored_sessions(db_path)["s"] == (20, 20)


def test_a_failing_write_in_a_group_does_not_undo_the_others(pool, db_path):
    p = pool(write_queue=8)

    def broken():
        return p.writer.run(lambda wdb: wdb.conn.execute("INSERT INTO no_such_table VALUES (1)"))

    works = [lambda: ingest_events(SqliteStore.over(p.get()), [event("g1", event_id="g1")]), broken,
             lambda: ingest_events(SqliteStore.over(p.get()), [event("g2", event_id="g2")])]
    results = run_together(p.writer, db_path, works)
    assert isinstance(results[1], sqlite3.OperationalError)
    assert results[0].processed == 1 and results[2].processed == 1
    assert set(stored_sessions(db_path)) == {"g1", "g2"}


@pytest.mark.sqlite_only  # a full disk made with SQLite's max_page_count
def test_a_full_disk_fails_only_the_write_that_does_not_fit(db):
    pages = db.conn.execute("PRAGMA page_count").fetchone()[0]
    db_path = db.conn.execute("PRAGMA database_list").fetchone()[2]

    def small_disk(path):
        # SQLite reports SQLITE_FULL, as on a full disk, past max_page_count.
        handle = connect(path)
        handle.conn.execute(f"PRAGMA max_page_count = {pages + 40}")
        return handle

    writer = WriteQueue(db_path, capacity=8, timeout=10, connect=small_disk)

    def ingest(events):
        return lambda: writer.run(lambda wdb: ingest_events(SqliteStore.over(wdb), events))

    huge = [event("huge", event_id=f"h{i}", input_data={"p": "x" * 2000}) for i in range(400)]
    try:
        results = run_together(writer, db_path, [ingest([event("small1", event_id="a")]), ingest(huge),
                                                 ingest([event("small2", event_id="b")])])
    finally:
        writer.stop()
    assert isinstance(results[1], StorageFull)
    assert "disk holding the database is full" in results[1].message
    assert results[0].processed == 1 and results[2].processed == 1
    assert set(stored_sessions(db_path)) == {"small1", "small2"}


def test_a_full_queue_refuses_at_once_and_a_deadline_withdraws(pool, db_path):
    p = pool(write_queue=1, write_timeout=0.5)
    db = p.get()
    blocker = sqlite3.connect(db_path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    waiting = threading.Thread(target=lambda: pytest.raises(WriterBusy, ingest_events, SqliteStore.over(p.get()),
                                                            [event("q", event_id="q1")]))
    waiting.start()
    while p.writer.pending < 1:
        time.sleep(0.01)
    started = time.monotonic()
    with pytest.raises(WriterBusy, match="too many writes waiting"):
        ingest_events(SqliteStore.over(db), [event("q", event_id="q2")])
    assert time.monotonic() - started < 0.2
    waiting.join()
    blocker.execute("COMMIT")
    blocker.close()
    time.sleep(0.3)
    assert p.writer.pending == 0
    assert "q" not in stored_sessions(db_path)
    assert getattr(db, WRITER_ATTR) is p.writer


def test_a_writer_that_cannot_open_the_database_answers_at_once(db_path):
    def unopenable(path):
        raise sqlite3.OperationalError("unable to open database file")

    writer = WriteQueue(db_path, capacity=4, timeout=10, connect=unopenable)
    for _ in range(2):  # and a later write tries again with a new writer thread
        started = time.monotonic()
        with pytest.raises(ServiceUnavailable, match="writer stopped .unable to open database file"):
            writer.run(lambda db: None)
        assert time.monotonic() - started < 2
    assert writer.pending == 0
