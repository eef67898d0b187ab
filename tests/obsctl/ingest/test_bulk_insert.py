"""store/sqlite/bulk.insert_rows: many rows per statement, each row treated as it would be alone."""

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
    bulk.insert_rows(conn, HEAD, ROW, rows(count))
    stored = conn.execute("SELECT k, n, s, label FROM t ORDER BY rowid").fetchall()
    assert stored == [(*r, "fixed") for r in rows(count)]


def test_no_rows_runs_nothing(conn):
    before = conn.total_changes
    bulk.insert_rows(conn, HEAD, ROW, [])
    assert conn.total_changes == before


def test_a_duplicate_key_fails_the_statement_and_the_transaction_undoes_it(conn):
    bulk.insert_rows(conn, HEAD, ROW, rows(5))
    conn.commit()
    with pytest.raises(sqlite3.IntegrityError), conn:
        bulk.insert_rows(conn, HEAD, ROW, rows(300, start=3))  # k00003 is already stored
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 5


def test_or_ignore_skips_stored_keys_and_total_changes_counts_the_new_rows(conn):
    bulk.insert_rows(conn, HEAD, ROW, rows(250))
    before = conn.total_changes
    bulk.insert_rows(conn, HEAD.replace("INSERT", "INSERT OR IGNORE"), ROW, rows(500, start=100))
    assert conn.total_changes - before == 350
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 600


def test_an_upsert_tail_applies_to_each_conflicting_row(conn):
    bulk.insert_rows(conn, HEAD, ROW, rows(300))
    tail = "ON CONFLICT (k) DO UPDATE SET n = n + excluded.n"
    bulk.insert_rows(conn, HEAD, ROW, [(k, 1000, s) for k, _, s in rows(450)], tail)
    stored = dict(conn.execute("SELECT k, n FROM t"))
    assert len(stored) == 450
    assert all(stored[f"k{i:05d}"] == i + 1000 for i in range(300))
    assert all(stored[f"k{i:05d}"] == 1000 for i in range(300, 450))


def test_chunks_stay_inside_a_small_bound_variable_limit(conn, monkeypatch):
    # SQLite before 3.32 allows 999 variables per statement: 3 per row -> at most 333 rows.
    conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
    monkeypatch.setattr(bulk, "_MAX_VARIABLES", 999)
    monkeypatch.setattr(bulk, "ROWS_PER_STATEMENT", 10_000)
    bulk.insert_rows(conn, HEAD, ROW, rows(1000))
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 1000
