"""SQL written once for both stores (issue 34): an area module here holds the functions of a
store area, each taking the store's handle (a sqlite_utils Database, or a psycopg Connection) and
writing its SQL against the handle's `Dialect`, which names what differs between the engines.
`obsctl/store/sqlite/<area>.py` and `obsctl/store/postgres/<area>.py` re-export them, so each
store's repository binds the same functions; an area keeps backend modules of its own only where
the engines truly differ.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Dialect:
    """What differs between the engines in the shared SQL: `name`, the placeholder `mark`,
    `now` the clock as obsctl's timestamp text, `arrival` the column ordering rows created in
    the same instant (SQLite's rowid; PostgreSQL's `seq`), `lock_rows` the clause that locks
    the rows a SELECT reads until the transaction ends, and `keep_rows` the one that keeps them
    from being deleted meanwhile (SQLite's write lock already serialises writing transactions)."""

    name: str
    mark: str
    now: str
    arrival: str
    lock_rows: str
    keep_rows: str

    @property
    def least(self) -> str:
        """The smallest of its arguments (SQLite's scalar MIN)."""
        return "MIN" if self.name == "sqlite" else "LEAST"

    @property
    def greatest(self) -> str:
        """The largest of its arguments (SQLite's scalar MAX)."""
        return "MAX" if self.name == "sqlite" else "GREATEST"

    def indexed_by(self, index: str) -> str:
        """SQLite's INDEXED BY clause naming the index a read must use (PostgreSQL's planner
        picks its own)."""
        return f" INDEXED BY {index}" if self.name == "sqlite" else ""

    def in_list(self, column: str, values: Sequence) -> tuple[str, list]:
        """`column` is one of `values`: the condition and its parameters (SQLite: an IN list of
        placeholders; PostgreSQL: one array parameter, whatever the number of values)."""
        if self.name == "postgresql":
            return f"{column} = ANY({self.mark})", [list(values)]
        return f"{column} IN ({', '.join([self.mark] * len(values))})", list(values)


SQLITE = Dialect("sqlite", "?", "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')", "rowid", "", "")
POSTGRES = Dialect("postgresql", "%s", "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')",
                   "seq", " FOR UPDATE", " FOR KEY SHARE")


def connection(handle: Any) -> tuple[Any, Dialect]:
    """The DB-API connection of a store handle and its dialect: a sqlite3 connection, or a
    sqlite_utils Database carrying one as `.conn`, is SQLite; anything else is a psycopg
    Connection."""
    if isinstance(handle, sqlite3.Connection):
        return handle, SQLITE
    inner = getattr(handle, "conn", None)
    if isinstance(inner, sqlite3.Connection):
        return inner, SQLITE
    return handle, POSTGRES


def execute_many(conn: Any, sql: str, rows: list) -> None:
    """One statement for each of `rows`, through a cursor (a psycopg Connection has no
    executemany of its own)."""
    if not rows:
        return
    cursor = conn.cursor()
    try:
        cursor.executemany(sql, rows)
    finally:
        cursor.close()


def insert_rows(db: Any, table: str, columns: Sequence[str], rows: list[list]) -> None:
    """Insert `rows` (values in `columns` order) into `table` in one executemany, in the order
    given (serial ids follow it)."""
    conn, d = connection(db)
    execute_many(conn, f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join([d.mark] * len(columns))})",
                 rows)


def one(cursor: Any) -> tuple:
    """The row of a query that always answers one (an aggregate, SHOW, a row known to exist):
    a cursor's fetchone() without the None it is typed to allow."""
    row = cursor.fetchone()
    if row is None:
        raise LookupError("the query answered no row")
    return row
