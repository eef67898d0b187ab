"""The SQL behind services/dashboard.py, for both stores: the dashboard's signing key when
OBSCTL_SECRET_KEY is not set (one row, written once, read by every server on the database), and
its logins (migration m029: one row per browser logged in, by token hash)."""

from __future__ import annotations

from typing import Any

from obsctl.store.sql import connection, one

__all__ = ["add_login", "delete_login", "get_login", "get_secret", "keep_secret", "prune_logins", "touch_login"]


def get_secret(db: Any) -> str | None:
    conn, _ = connection(db)
    row = conn.execute("SELECT secret FROM dashboard_secret WHERE id = 1").fetchone()
    return row[0] if row else None


def keep_secret(db: Any, secret: str, created_at: str) -> str:
    """Store `secret` unless a key is stored already; the stored key either way."""
    conn, d = connection(db)
    conn.execute(f"INSERT INTO dashboard_secret (id, secret, created_at) VALUES (1, {d.mark}, {d.mark}) "
                 f"ON CONFLICT (id) DO NOTHING", [secret, created_at])
    return one(conn.execute("SELECT secret FROM dashboard_secret WHERE id = 1"))[0]


def add_login(db: Any, token_hash: str, key_proof: str, at: str) -> None:
    conn, d = connection(db)
    m = d.mark
    conn.execute(f"INSERT INTO dashboard_logins (token_hash, key_proof, created_at, last_seen_at) "
                 f"VALUES ({m}, {m}, {m}, {m})", [token_hash, key_proof, at, at])


def get_login(db: Any, token_hash: str) -> dict | None:
    conn, d = connection(db)
    row = conn.execute(f"SELECT key_proof, created_at, last_seen_at FROM dashboard_logins WHERE token_hash = {d.mark}",
                       [token_hash]).fetchone()
    return None if row is None else {"key_proof": row[0], "created_at": row[1], "last_seen_at": row[2]}


def touch_login(db: Any, token_hash: str, at: str) -> None:
    conn, d = connection(db)
    m = d.mark
    conn.execute(f"UPDATE dashboard_logins SET last_seen_at = {m} WHERE token_hash = {m} AND last_seen_at < {m}",
                 [at, token_hash, at])


def delete_login(db: Any, token_hash: str) -> bool:
    conn, d = connection(db)
    return conn.execute(f"DELETE FROM dashboard_logins WHERE token_hash = {d.mark}", [token_hash]).rowcount > 0


def prune_logins(db: Any, idle_before: str, created_before: str) -> int:
    """Delete the logins unused since `idle_before` or begun before `created_before`."""
    conn, d = connection(db)
    return conn.execute(f"DELETE FROM dashboard_logins WHERE last_seen_at < {d.mark} OR created_at < {d.mark}",
                        [idle_before, created_before]).rowcount
