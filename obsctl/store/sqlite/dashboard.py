"""The SQL behind services/dashboard.py: the dashboard's signing key when OBSCTL_SECRET_KEY is
not set (one row, written once, read by every server on the database), and its logins."""

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


# The dashboard's logins (migration m029): one row per browser logged in, by token hash.

def add_login(db: sqlite_utils.Database, token_hash: str, key_proof: str, at: str) -> None:
    db.execute("INSERT INTO dashboard_logins (token_hash, key_proof, created_at, last_seen_at) "
               "VALUES (?, ?, ?, ?)", [token_hash, key_proof, at, at])


def get_login(db: sqlite_utils.Database, token_hash: str) -> dict | None:
    row = db.execute("SELECT key_proof, created_at, last_seen_at FROM dashboard_logins WHERE token_hash = ?",
                     [token_hash]).fetchone()
    return None if row is None else {"key_proof": row[0], "created_at": row[1], "last_seen_at": row[2]}


def touch_login(db: sqlite_utils.Database, token_hash: str, at: str) -> None:
    db.execute("UPDATE dashboard_logins SET last_seen_at = ? WHERE token_hash = ? AND last_seen_at < ?",
               [at, token_hash, at])


def delete_login(db: sqlite_utils.Database, token_hash: str) -> bool:
    return db.execute("DELETE FROM dashboard_logins WHERE token_hash = ?", [token_hash]).rowcount > 0


def prune_logins(db: sqlite_utils.Database, idle_before: str, created_before: str) -> int:
    """Delete the logins unused since `idle_before` or begun before `created_before`."""
    return db.execute("DELETE FROM dashboard_logins WHERE last_seen_at < ? OR created_at < ?",
                      [idle_before, created_before]).rowcount
