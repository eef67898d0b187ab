"""Which SQLite errors are conditions of the moment, and their obsctl errors."""

from __future__ import annotations

import sqlite3

from obsctl.errors import ObsctlError, ServiceUnavailable, StorageDamaged, StorageError, StorageFull

FULL_MESSAGE = ("the disk holding the database is full (SQLite: database or disk is full); "
                "nothing of this write was stored; free space and retry")


def is_busy(exc: BaseException) -> bool:
    """Another connection holds the lock SQLite needed (SQLITE_BUSY / SQLITE_LOCKED)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def is_full(exc: BaseException) -> bool:
    """The disk (or the database's max_page_count) is full: SQLITE_FULL."""
    if not isinstance(exc, sqlite3.Error):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF == sqlite3.SQLITE_FULL
    return "database or disk is full" in str(exc)


def is_corrupt(exc: BaseException) -> bool:
    """The file is damaged: SQLITE_CORRUPT (or not a database at all: SQLITE_NOTADB)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    return "malformed" in str(exc) or "not a database" in str(exc)


def is_readonly_storage(exc: BaseException) -> bool:
    """The file or its directory cannot be written (SQLITE_READONLY)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF == sqlite3.SQLITE_READONLY
    return "readonly database" in str(exc)


def translate(exc: BaseException) -> BaseException:
    """The obsctl error for a SQLite error the user can act on; other errors unchanged."""
    if is_full(exc):
        return StorageFull(FULL_MESSAGE)
    if is_busy(exc):
        return ServiceUnavailable("the database is busy (another process is writing); retry shortly")
    return exc


def translate_error(exc: sqlite3.Error) -> ObsctlError:
    """The obsctl error for any SQLite error: what leaves the store instead of it.

    The result is marked `database_fault`: the failure may have undone the whole transaction
    (the server's writer then retries the writes grouped with it one by one)."""
    if is_full(exc):
        error: ObsctlError = StorageFull(FULL_MESSAGE)
    elif is_busy(exc):
        error = ServiceUnavailable("the database is busy (another process is writing); retry shortly")
    elif is_corrupt(exc):
        error = StorageDamaged(f"the database file is damaged ({exc}); restore it from a backup")
    else:
        error = StorageError(f"database error: {exc}")
    error.database_fault = True
    return error
