"""A table of records addressed by a key: the insert/get/list/update/delete SQL that the
alert-rule, webhook and SLA-target stores share."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sqlite_utils


class RecordTable:
    def __init__(self, name: str, columns: Sequence[str], key: Sequence[str]):
        self.name = name
        self.columns = tuple(columns)
        self.key = tuple(key)
        self._select = f"SELECT {', '.join(self.columns)} FROM {name}"
        self._insert = (f"INSERT INTO {name} ({', '.join(self.columns)}) "
                        f"VALUES ({', '.join('?' for _ in self.columns)})")
        self._where_key = " AND ".join(f"{c} = ?" for c in self.key)

    def _row(self, row) -> dict:
        return dict(zip(self.columns, row))

    def insert(self, db: sqlite_utils.Database, record: dict) -> None:
        db.conn.execute(self._insert, [record[c] for c in self.columns])

    def insert_many(self, db: sqlite_utils.Database, records: Iterable[dict]) -> None:
        db.conn.executemany(self._insert, ([r[c] for c in self.columns] for r in records))

    def get(self, db: sqlite_utils.Database, *key) -> dict | None:
        row = db.conn.execute(f"{self._select} WHERE {self._where_key}", key).fetchone()
        return self._row(row) if row else None

    def select(self, db: sqlite_utils.Database, where: str = "", params: Sequence = (),
               order_by: str = "") -> list[dict]:
        sql = self._select + (f" WHERE {where}" if where else "") + (f" ORDER BY {order_by}" if order_by else "")
        return [self._row(row) for row in db.conn.execute(sql, params)]

    def update(self, db: sqlite_utils.Database, key: Sequence, changes: dict,
               allowed: Iterable[str]) -> bool:
        """Set the `allowed` columns present in `changes`; False when no record has `key`."""
        allowed = set(allowed)
        columns = [c for c in changes if c in allowed]
        if not columns:
            return self.get(db, *key) is not None
        assignments = ", ".join(f"{c} = ?" for c in columns)
        cursor = db.conn.execute(f"UPDATE {self.name} SET {assignments} WHERE {self._where_key}",
                                 [*(changes[c] for c in columns), *key])
        return cursor.rowcount > 0

    def delete(self, db: sqlite_utils.Database, *key) -> bool:
        return db.conn.execute(f"DELETE FROM {self.name} WHERE {self._where_key}", key).rowcount > 0
