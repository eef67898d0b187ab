"""The PostgreSQL schema: the same tables and the same migrations, by name, as the SQLite
store's (obsctl/store/sqlite/schema.py), so `schema_version` means the same on both.

Append-only: never edit an applied migration. They are applied once, by whichever instance
takes the advisory lock first (`migrate`); the others wait for it and then find nothing to do.

Differences from SQLite, each for a reason:
- `events` is partitioned by week of `timestamp` (declarative range partitioning; the
  partitions are created ahead by ingest, `partitions.py`), so `prune` can drop whole weeks.
  A partitioned table cannot enforce a unique `event_id` on its own, so `event_keys` holds
  every stored event id (its primary key is what makes ingest exactly-once across servers).
- Timestamps stay ISO-8601 text, as on SQLite, compared byte by byte (COLLATE "C"), so every
  answer is the same text on both backends.
- `duration_ms` is NUMERIC, like SQLite's NUMERIC affinity: a whole number reads back as an
  integer, a fraction as a float (the store's loader, pg_store.py).
- `events.session_id` has no foreign key: attaching a week's partition would then lock
  `sessions` against every batch in flight (a deadlock with them), and every insert would
  pay for the check. Ingest writes a batch's sessions before its events in the same
  transaction, and prune deletes a session's events with it, as the cascade did on SQLite.
- The rollups are kept by the same rules: `session_stats` by triggers on `sessions`,
  `event_stats` and `event_totals` by the ingest transaction (and a trigger on delete).
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg
from psycopg import sql

from obsctl.store.postgres.migrations_early import (  # noqa: F401 (SESSION_DURATION_MS: re-exported)
    SESSION_DURATION_MS,
    m001,
    m002,
    m003,
    m004,
    m005,
    m006,
    m007,
    m008,
    m009,
    m010,
    m011,
    m012,
    m013,
)
from obsctl.store.postgres.migrations_late import (
    m016,
    m017,
    m018,
    m019,
    m020,
    m021,
    m022,
    m024,
    m025,
    m027,
    m028,
    m029,
    m031,
    m032,
    m033,
    m034,
    m036,
    m039,
    m040,
)
from obsctl.store.sql import one

MIGRATIONS_TABLE = "_obsctl_migrations"

# (name, apply): the names of obsctl/store/sqlite/schema.py's migrations, in order (the
# functions: migrations_early.py and migrations_late.py).
MIGRATIONS: list[tuple[str, Callable[[psycopg.Connection], None]]] = [
    ("m001_sessions_and_events", m001),
    ("m002_alerts_webhooks_sla", m002),
    ("m003_analytics_event_stats", m003),
    ("m004_alert_metric_and_delivery_indexes", m004),
    ("m005_scorecard_event_stats_index", m005),
    ("m006_tool_call_aliases", m006),
    ("m007_session_body_event_counts", m007),
    ("m008_webhook_allow_private", m008),
    ("m009_analytics_counters", m009),
    ("m010_sessions_newest_first", m010),
    ("m011_events_errors_index", m011),
    ("m012_alert_resolution", m012),
    ("m013_rule_severity", m013),
    ("m016_session_tags_and_scores", m016),
    ("m017_session_idle_completion", m017),
    ("m018_dashboard_secret", m018),
    ("m019_change_acks", m019),
    ("m020_events_ingest_order", m020),
    # Before m021, as on SQLite (obsctl/store/sqlite/schema.py says why).
    ("m031_cache_and_reasoning_tokens", m031),
    ("m021_session_costs", m021),
    ("m022_event_search", m022),
    ("m024_session_filter_indexes", m024),
    ("m025_search_indexed_text_cap", m025),
    ("m029_dashboard_logins", m029),
    ("m027_session_breakdown_index", m027),
    ("m028_session_breakdown_order", m028),
    ("m039_event_stats_costs", m039),
    ("m040_session_stats_costs", m040),
    ("m032_background_sessions", m032),
    ("m033_session_breakdown_tokens", m033),
    ("m034_long_session_reads", m034),
    ("m036_search_after_commit", m036),
]


def applied(conn: psycopg.Connection) -> list[str]:
    """Names of the migrations applied to the schema `conn` works in ([] for a new one)."""
    exists = one(conn.execute("SELECT to_regclass(%s) IS NOT NULL", [MIGRATIONS_TABLE]))[0]
    if not exists:
        return []
    return [r[0] for r in conn.execute(f"SELECT name FROM {MIGRATIONS_TABLE} ORDER BY applied_order")]


def pending(conn: psycopg.Connection) -> list[str]:
    done = set(applied(conn))
    return [name for name, _ in MIGRATIONS if name not in done]


def migrate(conn: psycopg.Connection) -> int:
    """Apply the pending migrations in one transaction under an advisory lock on the schema,
    so that several servers starting together apply each exactly once. Returns how many
    this call applied."""
    with conn.transaction():
        # Keyed by the search path, not the schema: the schema itself may not exist yet, and
        # creating it is part of what only one of the instances starting together may do.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('obsctl-migrations:' || current_setting('search_path')))")
        if one(conn.execute("SELECT current_schema()"))[0] is None:
            # The URL names a schema (options=-csearch_path=NAME) that does not exist yet.
            name = one(conn.execute("SELECT trim(both '\"' from split_part(current_setting('search_path'), ',', 1))"
                                ))[0]
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(name)))
        conn.execute(f"""CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} (
                             name TEXT PRIMARY KEY, applied_order SERIAL,
                             applied_at TIMESTAMPTZ NOT NULL DEFAULT now())""")
        done = set(applied(conn))
        count = 0
        for name, apply in MIGRATIONS:
            if name in done:
                continue
            apply(conn)
            conn.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name) VALUES (%s)", [name])
            count += 1
    return count
