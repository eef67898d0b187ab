"""Retention and database tools: prune old sessions, describe the database, back it up."""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path

import sqlite_utils

from obsctl.errors import InvalidInput
from obsctl.store import maintenance as store
from obsctl.store.db import schema_version
from obsctl.timeutil import iso_minus, now_iso

_DURATION = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
PRUNE_BATCH_SESSIONS = 500


def parse_age(text: str) -> timedelta:
    """`30d`, `12h`, `90m`, `2w` -> timedelta (at least one minute)."""
    match = _DURATION.match(text or "")
    if not match or int(match.group(1)) == 0:
        raise InvalidInput(f"age must look like 30d, 12h, 90m or 2w (a positive number and a unit); got {text!r}")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


def prune(db: sqlite_utils.Database, older_than: str, *, dry_run: bool = False,
          on_progress=lambda sessions, events: None) -> dict:
    """Delete sessions (with their events) whose last activity is older than `older_than`.

    Works in transactions of a few hundred sessions so a running server keeps ingesting.
    """
    age = parse_age(older_than)
    cutoff = iso_minus(age)
    sessions, events = store.count_prunable(db, cutoff)
    result = {"older_than": older_than, "cutoff": cutoff, "dry_run": dry_run,
              "sessions": sessions, "events": events}
    if dry_run or not sessions:
        return result
    deleted_sessions = deleted_events = 0
    while True:
        s, e = store.prune_batch(db, cutoff, PRUNE_BATCH_SESSIONS)
        if not s:
            break
        deleted_sessions += s
        deleted_events += e
        on_progress(deleted_sessions, deleted_events)
    result.update(sessions=deleted_sessions, events=deleted_events)
    return result


def check_integrity(db: sqlite_utils.Database) -> dict:
    """SQLite's quick check of the whole file (every page of every table and index, without
    cross-checking indexes against tables): `{"quick_check": "ok" | "damaged", "problems":
    [...], "checked_at": ...}`. It reads the whole file, so it takes a while on large ones."""
    checked_at = now_iso()
    problems = store.quick_check(db)
    return {"quick_check": "damaged" if problems else "ok", "problems": problems,
            "checked_at": checked_at}


def skipped_check() -> dict:
    return {"quick_check": "skipped", "problems": [], "checked_at": None}


def damaged_message(path, check: dict) -> str:
    problems = check["problems"]
    noun = "problem" if len(problems) == 1 else "problems"
    return (f"the database {path} is damaged: SQLite's quick_check found {len(problems)}"
            f"{'+' if len(problems) >= 20 else ''} {noun}, the first: {problems[0]}; restore it from "
            f"a backup (obsctl db backup makes them), or pass --skip-check to use it anyway")


def db_info(db: sqlite_utils.Database, path: Path, *, check: bool = True) -> dict:
    """Path, size on disk (with the WAL), schema version, row counts, SQLite details and,
    unless `check` is false, the result of the integrity check."""
    size = sum(os.path.getsize(p) for p in (str(path), f"{path}-wal") if os.path.exists(p))
    integrity = check_integrity(db) if check else skipped_check()
    return {
        "path": str(Path(path).resolve()),
        "size_bytes": size,
        "schema_version": schema_version(db),
        "tables": store.table_counts(db, damaged=integrity["quick_check"] == "damaged"),
        **store.pragmas(db, Path(path)),
        "integrity": integrity,
    }


def backup(db: sqlite_utils.Database, dest: str | Path, *, force: bool = False) -> dict:
    """Write a consistent copy of the database to `dest` while others keep writing."""
    dest = Path(dest)
    if dest.exists():
        if not force:
            raise InvalidInput(f"{dest} already exists; choose another path or pass --force")
        if dest.is_dir():
            raise InvalidInput(f"{dest} is a directory; give a file path")
        dest.unlink()
    if not dest.parent.exists():
        raise InvalidInput(f"directory {dest.parent} does not exist")
    store.backup_to(db, dest)
    return {"path": str(dest.resolve()), "size_bytes": dest.stat().st_size}
