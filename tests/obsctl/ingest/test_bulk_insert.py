"""store/sqlite/bulk.execute_rows: many rows per statement, each row treated as it would be alone."""

from __future__ import annotations

import sqlite3

import pytest

from obsctl.store.sqlite import bulk


@pytest.fixture
def conn(tmp_path):
    conn = sqlite3.connect(tmp_path / "bulk.db")
    conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER, s TEXT, label TEXT)")
    yield conn
    conn.close()


HEAD = "INSERT INTO t (k, n, s, label)"
ROW = "(?, ?, ?, 'fixed')"


def rows(count: int, start: int = 0) -> list[tuple]:
    return [(f"k{i:05d}", i, None if i % 3 else f"text {i}") for i in range(start, start + count)]


@pytest.mark.parametrize("count", [1, 199, 200, 201, 401, 1000, 1037])
def test_every_row_is_stored_once_in_order_whatever_the_chunking(conn, count):
    bulk.execute_rows(conn, HEAD, ROW, rows(count))
    stored = conn.execute("SELECT k, n, s, label FROM t ORDER BY rowid").fetchall()
    assert stored == [(*r, "fixed") for r in rows(count)]


def test_no_rows_runs_nothing(conn):
    before = conn.total_changes
    bulk.execute_rows(conn, HEAD, ROW, [])
    assert conn.total_changes == before


def test_a_duplicate_key_fails_the_statement_and_the_transaction_undoes_it(conn):
    bulk.execute_rows(conn, HEAD, ROW, rows(5))
    conn.commit()
    with pytest.raises(sqlite3.IntegrityError), conn:
        bulk.execute_rows(conn, HEAD, ROW, rows(300, start=3))  # k00003 is already stored
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 5


def test_or_ignore_skips_stored_keys_and_total_changes_counts_the_new_rows(conn):
    bulk.execute_rows(conn, HEAD, ROW, rows(250))
    before = conn.total_changes
    bulk.execute_rows(conn, HEAD.replace("INSERT", "INSERT OR IGNORE"), ROW, rows(500, start=100))
    assert conn.total_changes - before == 350
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 600


def test_an_upsert_tail_applies_to_each_conflicting_row(conn):
    bulk.execute_rows(conn, HEAD, ROW, rows(300))
    tail = "ON CONFLICT (k) DO UPDATE SET n = n + excluded.n"
    bulk.execute_rows(conn, HEAD, ROW, [(k, 1000, s) for k, _, s in rows(450)], tail)
    stored = dict(conn.execute("SELECT k, n FROM t"))
    assert len(stored) == 450
    assert all(stored[f"k{i:05d}"] == i + 1000 for i in range(300))
    assert all(stored[f"k{i:05d}"] == 1000 for i in range(300, 450))


def test_chunks_stay_inside_a_small_bound_variable_limit(conn, monkeypatch):
    # SQLite before 3.32 allows 999 variables per statement: 3 per row -> at most 333 rows.
    conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
    monkeypatch.setattr(bulk, "ROWS_PER_STATEMENT", 10_000)
    bulk.execute_rows(conn, HEAD, ROW, rows(1000))
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 1000


# -- session_start / session_end applied together: the same as one after the other ---------

def _lifecycle_events() -> list[dict]:
    """Repeated starts and ends of the same sessions within one batch, with and without
    metadata, final token counts and statuses, in and out of time order."""
    from tests.conftest import event

    return [
        event("a", "session_start", agent_name="first", metadata={"v": 1}, timestamp="2026-03-01T10:00:05Z"),
        event("a", "llm_call", tokens_in=3, timestamp="2026-03-01T10:00:06Z"),
        event("a", "session_start", agent_name="second", timestamp="2026-03-01T10:00:01Z"),
        event("b", "session_end", timestamp="2026-03-01T11:00:00Z", status="error", total_tokens_in=40),
        event("a", "session_end", timestamp="2026-03-01T10:05:00Z", total_tokens_in=7, total_tokens_out=9),
        event("a", "session_start", agent_name="third", metadata={"v": 3}, timestamp="2026-03-01T10:00:09Z"),
        event("b", "session_end", timestamp="2026-03-01T10:59:00Z", total_tokens_out=5),
        event("a", "session_end", timestamp="2026-03-01T10:04:00Z", status="error"),
        event("c", "session_start", agent_name="only", timestamp="2026-03-01T12:00:00Z"),
    ]


def _sessions(db) -> list[tuple]:
    """The session rows, but for last_seen_at: the server's clock when events arrived."""
    columns = [c[0] for c in db.conn.execute("SELECT * FROM sessions LIMIT 0").description if c[0] != "last_seen_at"]
    return db.conn.execute(f"SELECT {', '.join(columns)} FROM sessions ORDER BY session_id").fetchall()


@pytest.mark.parametrize("update_from", [True, False])
def test_starts_and_ends_in_one_batch_equal_the_same_events_one_batch_each(tmp_path, monkeypatch,
                                                                           update_from):
    from obsctl.services.ingest import ingest_events
    from tests.store_support import open_db

    monkeypatch.setattr(bulk, "UPDATE_FROM", update_from and bulk.UPDATE_FROM)
    together, apart = open_db(tmp_path / "together.db"), open_db(tmp_path / "apart.db")
    ingest_events(together, _lifecycle_events())
    for one in _lifecycle_events():
        ingest_events(apart, [one])
    assert _sessions(together) == _sessions(apart)
    a = dict(zip([c[0] for c in together.conn.execute("SELECT * FROM sessions").description
                  if c[0] != "last_seen_at"], _sessions(together)[0], strict=True))
    # The last start's agent and the last metadata given; the last end's time, status and
    # token counts, each from the last end that has one.
    assert (a["agent_name"], a["started_at"], a["ended_at"], a["status"]) == (
        "third", "2026-03-01T10:00:01.000Z", "2026-03-01T10:04:00.000Z", "error")
    assert (a["total_tokens_in"], a["total_tokens_out"], a["metadata"]) == (7, 9, '{"v":3}')
    b = dict(zip(a, _sessions(together)[1], strict=True))
    assert (b["status"], b["total_tokens_in"], b["total_tokens_out"]) == ("completed", 40, 5)
    together.close()
    apart.close()
