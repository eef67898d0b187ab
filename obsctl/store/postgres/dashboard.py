"""The dashboard's signing key on PostgreSQL: the same functions as
obsctl/store/sqlite/dashboard.py."""

from __future__ import annotations

import psycopg


def get_secret(conn: psycopg.Connection) -> str | None:
    row = conn.execute("SELECT secret FROM dashboard_secret WHERE id = 1").fetchone()
    return row[0] if row else None


def keep_secret(conn: psycopg.Connection, secret: str, created_at: str) -> str:
    """Store `secret` unless a key is stored already; the stored key either way."""
    conn.execute("INSERT INTO dashboard_secret (id, secret, created_at) VALUES (1, %s, %s) "
                 "ON CONFLICT (id) DO NOTHING", [secret, created_at])
    return conn.execute("SELECT secret FROM dashboard_secret WHERE id = 1").fetchone()[0]
