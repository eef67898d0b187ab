"""A table of records addressed by a key on PostgreSQL: the insert/get/list/update/delete SQL
that the alert-rule, webhook and SLA-target stores share (obsctl/store/sqlite/records.py).

Identifiers come from the constant column lists of the area modules and are quoted with
psycopg.sql; values are always parameters. Columns not listed (such as `seq`, the creation
order standing in for SQLite's rowid) never appear in the records returned."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import psycopg
from psycopg import sql


def _identifiers(names: Iterable[str]) -> sql.Composed:
    return sql.SQL(", ").join(sql.Identifier(n) for n in names)


class RecordTable:
    def __init__(self, name: str, columns: Sequence[str], key: Sequence[str]):
        self.name = name
        self.columns = tuple(columns)
        self.key = tuple(key)
        self._table = sql.Identifier(name)
        self._select = sql.SQL("SELECT {} FROM {}").format(_identifiers(self.columns), self._table)
        self._insert = sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
            self._table, _identifiers(self.columns),
            sql.SQL(", ").join(sql.Placeholder() for _ in self.columns))
        self._where_key = sql.SQL(" AND ").join(
            sql.SQL("{} = %s").format(sql.Identifier(c)) for c in self.key)

    def _row(self, row) -> dict:
        return dict(zip(self.columns, row))

    def insert(self, conn: psycopg.Connection, record: dict) -> None:
        conn.execute(self._insert, [record[c] for c in self.columns])

    def insert_many(self, conn: psycopg.Connection, records: Iterable[dict]) -> None:
        rows = [[r[c] for c in self.columns] for r in records]
        if rows:
            with conn.cursor() as cursor:
                cursor.executemany(self._insert, rows)

    def get(self, conn: psycopg.Connection, *key) -> dict | None:
        row = conn.execute(sql.SQL("{} WHERE {}").format(self._select, self._where_key),
                           list(key)).fetchone()
        return self._row(row) if row else None

    def select(self, conn: psycopg.Connection, where: str = "", params: Sequence = (),
               order_by: Sequence[str] = (), lock: str = "") -> list[dict]:
        """Records matching `where` (constant SQL text of the calling module, %s placeholders
        for `params`), ordered by the columns named in `order_by`; `lock` a constant locking
        clause (such as FOR KEY SHARE) held until the enclosing transaction ends."""
        parts = [self._select]
        if where:
            parts.append(sql.SQL(" WHERE ") + sql.SQL(where))
        if order_by:
            parts.append(sql.SQL(" ORDER BY ") + _identifiers(order_by))
        if lock:
            parts.append(sql.SQL(" ") + sql.SQL(lock))
        return [self._row(row) for row in conn.execute(sql.Composed(parts), list(params))]

    def update(self, conn: psycopg.Connection, key: Sequence, changes: dict,
               allowed: Iterable[str]) -> bool:
        """Set the `allowed` columns present in `changes`; False when no record has `key`."""
        allowed = set(allowed)
        columns = [c for c in changes if c in allowed]
        if not columns:
            return self.get(conn, *key) is not None
        assignments = sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(c)) for c in columns)
        cursor = conn.execute(sql.SQL("UPDATE {} SET {} WHERE {}").format(
            self._table, assignments, self._where_key), [*(changes[c] for c in columns), *key])
        return cursor.rowcount > 0

    def delete(self, conn: psycopg.Connection, *key) -> bool:
        cursor = conn.execute(sql.SQL("DELETE FROM {} WHERE {}").format(self._table, self._where_key),
                              list(key))
        return cursor.rowcount > 0
