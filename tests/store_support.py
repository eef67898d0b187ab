"""A store for tests that also answers as the sqlite-utils handle under it."""

from __future__ import annotations

from obsctl.store.sqlite.db import open_db as _open_db
from obsctl.store.sqlite.sqlite_store import SqliteStore, _OneConnection


class StoreAndHandle(SqliteStore):
    """The store a test hands to services, which also answers as the sqlite-utils handle
    under it (`db.execute`, `db["events"]`), so a test can arrange and inspect rows directly
    on the same connection."""

    def __getattr__(self, name):
        return getattr(self.__dict__["_connections"].handle, name)

    def __getitem__(self, name):
        return self._connections.handle[name]


def store_and_handle(handle) -> StoreAndHandle:
    return StoreAndHandle(_OneConnection(handle), path=None)


def open_db(path, **kwargs) -> StoreAndHandle:
    """obsctl.store.sqlite.db.open_db, as a store a test can also use as the handle."""
    return store_and_handle(_open_db(path, **kwargs))


def open_db_readonly(path) -> StoreAndHandle:
    """obsctl.store.sqlite.db.open_db_readonly, as a store a test can also use as the handle."""
    from obsctl.store.sqlite.db import open_db_readonly as _open_db_readonly

    return store_and_handle(_open_db_readonly(path))
