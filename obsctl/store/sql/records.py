"""A table of records addressed by a key, for both stores: the insert/get/list/update/delete
SQL the configuration areas share (SLA targets; alert rules and webhooks keep the per-store
RecordTable of obsctl/store/{sqlite,postgres}/records.py until they move here).

Table and column names come from the constant column lists of the area modules; values are
always parameters. A `where` given to `select` is constant text of the calling module written
with the dialect's placeholder."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from obsctl.store.sql import Dialect, connection


class RecordTable:
    def __init__(self, name: str, columns: Sequence[str], key: Sequence[str]):
        self.name = name
        self.columns = tuple(columns)
        self.key = tuple(key)
        self._select = f"SELECT {', '.join(self.columns)} FROM {name}"

    def _row(self, row) -> dict:
        return dict(zip(self.columns, row))

    def _where_key(self, d: Dialect) -> str:
        return " AND ".join(f"{c} = {d.mark}" for c in self.key)

    def _insert(self, d: Dialect) -> str:
        return f"INSERT INTO {self.name} ({', '.join(self.columns)}) VALUES ({', '.join([d.mark] * len(self.columns))})"

    def insert(self, db: Any, record: dict) -> None:
        conn, d = connection(db)
        conn.execute(self._insert(d), [record[c] for c in self.columns])

    def get(self, db: Any, *key) -> dict | None:
        conn, d = connection(db)
        row = conn.execute(f"{self._select} WHERE {self._where_key(d)}", list(key)).fetchone()
        return self._row(row) if row else None

    def select(self, db: Any, where: str = "", params: Sequence = (), order_by: Sequence[str] = (),
               lock: str = "") -> list[dict]:
        """Records matching `where`, ordered by the columns named in `order_by`; `lock` a
        locking clause of the dialect (keep_rows, lock_rows) held until the transaction ends."""
        conn, _ = connection(db)
        sql = self._select + (f" WHERE {where}" if where else "") + (
            f" ORDER BY {', '.join(order_by)}" if order_by else "") + lock
        return [self._row(row) for row in conn.execute(sql, list(params))]

    def update(self, db: Any, key: Sequence, changes: dict, allowed: Iterable[str]) -> bool:
        """Set the `allowed` columns present in `changes`; False when no record has `key`."""
        allowed = set(allowed)
        columns = [c for c in changes if c in allowed]
        if not columns:
            return self.get(db, *key) is not None
        conn, d = connection(db)
        assignments = ", ".join(f"{c} = {d.mark}" for c in columns)
        cursor = conn.execute(f"UPDATE {self.name} SET {assignments} WHERE {self._where_key(d)}",
                              [*(changes[c] for c in columns), *key])
        return cursor.rowcount > 0

    def delete(self, db: Any, *key) -> bool:
        conn, d = connection(db)
        return conn.execute(f"DELETE FROM {self.name} WHERE {self._where_key(d)}", list(key)).rowcount > 0
