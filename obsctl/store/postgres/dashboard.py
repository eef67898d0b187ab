"""The dashboard's signing key and logins on PostgreSQL: the same functions as
obsctl/store/sqlite/dashboard.py."""

from __future__ import annotations

import psycopg

from obsctl.store.sql import one


def get_secret(conn: psycopg.Connection) -> str | None:
    row = conn.execute("SELECT secret FROM dashboard_secret WHERE id = 1").fetchone()
    return row[0] if row else None


def keep_secret(conn: psycopg.Connection, secret: str, created_at: str) -> str:
    """Store `secret` unless a key is stored already; the stored key either way."""
    conn.execute("INSERT INTO dashboard_secret (id, secret, created_at) VALUES (1, %s, %s) "
                 "ON CONFLICT (id) DO NOTHING", [secret, created_at])
    return one(conn.execute("SELECT secret FROM dashboard_secret WHERE id = 1"))[0]


# The dashboard's logins (migration m029), as in obsctl/store/sqlite/dashboard.py.

def add_login(conn: psycopg.Connection, token_hash: str, key_proof: str, at: str) -> None:
    conn.execute("INSERT INTO dashboard_logins (token_hash, key_proof, created_at, last_seen_at) "
                 "VALUES (%s, %s, %s, %s)", [token_hash, key_proof, at, at])


def get_login(conn: psycopg.Connection, token_hash: str) -> dict | None:
    row = conn.execute("SELECT key_proof, created_at, last_seen_at FROM dashboard_logins WHERE token_hash = %s",
                       [token_hash]).fetchone()
    return None if row is None else {"key_proof": row[0], "created_at": row[1], "last_seen_at": row[2]}


def touch_login(conn: psycopg.Connection, token_hash: str, at: str) -> None:
    conn.execute("UPDATE dashboard_logins SET last_seen_at = %s WHERE token_hash = %s AND last_seen_at < %s",
                 [at, token_hash, at])


def delete_login(conn: psycopg.Connection, token_hash: str) -> bool:
    return conn.execute("DELETE FROM dashboard_logins WHERE token_hash = %s", [token_hash]).rowcount > 0


def prune_logins(conn: psycopg.Connection, idle_before: str, created_before: str) -> int:
    """Delete the logins unused since `idle_before` or begun before `created_before`."""
    return conn.execute("DELETE FROM dashboard_logins WHERE last_seen_at < %s OR created_at < %s",
                        [idle_before, created_before]).rowcount
