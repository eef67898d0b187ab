"""The dashboard's signing key, when OBSCTL_SECRET_KEY is not set (the SQL behind
services/dashboard.py): one row, written once, read by every server on the database."""

from __future__ import annotations

import sqlite_utils


def get_secret(db: sqlite_utils.Database) -> str | None:
    row = db.execute("SELECT secret FROM dashboard_secret WHERE id = 1").fetchone()
    return row[0] if row else None


def keep_secret(db: sqlite_utils.Database, secret: str, created_at: str) -> str:
    """Store `secret` unless a key is stored already; the stored key either way."""
    db.execute("INSERT OR IGNORE INTO dashboard_secret (id, secret, created_at) VALUES (1, ?, ?)",
               [secret, created_at])
    return db.execute("SELECT secret FROM dashboard_secret WHERE id = 1").fetchone()[0]
