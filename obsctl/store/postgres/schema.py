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

MIGRATIONS_TABLE = "_obsctl_migrations"

# Wall-clock duration of an ended session in whole milliseconds, as SQLite's julianday
# expression computes it (analytics.py uses the same text for the index to serve it).
SESSION_DURATION_MS = "obsctl_duration_ms(started_at, ended_at)"
# Immutable in fact: obsctl's timestamps are UTC ISO-8601 text, and the function fixes the
# time zone it parses them in, so the index on it (m009) stays valid.
_DURATION_FUNCTION = """
CREATE FUNCTION obsctl_duration_ms(started TEXT, ended TEXT) RETURNS BIGINT
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET TimeZone = 'UTC' AS $$
    SELECT GREATEST(0, ROUND(EXTRACT(EPOCH FROM (ended::timestamptz - started::timestamptz)) * 1000)::bigint)
$$
"""


def _m001(conn: psycopg.Connection) -> None:
    conn.execute("""
        CREATE TABLE sessions (
            session_id TEXT COLLATE "C" PRIMARY KEY,
            agent_name TEXT COLLATE "C" NOT NULL DEFAULT 'unknown',
            started_at TEXT COLLATE "C" NOT NULL,
            ended_at TEXT COLLATE "C",
            metadata TEXT,
            total_tokens_in BIGINT NOT NULL DEFAULT 0,
            total_tokens_out BIGINT NOT NULL DEFAULT 0,
            status TEXT COLLATE "C" NOT NULL DEFAULT 'active',
            event_count BIGINT NOT NULL DEFAULT 0,
            error_count BIGINT NOT NULL DEFAULT 0,
            total_duration_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
            last_event_at TEXT COLLATE "C"
        );
        CREATE INDEX idx_sessions_started ON sessions(started_at);
        CREATE INDEX idx_sessions_agent_started ON sessions(agent_name, started_at);
        CREATE INDEX idx_sessions_status_started ON sessions(status, started_at);
        CREATE INDEX idx_sessions_last_event ON sessions(last_event_at);

        CREATE TABLE events (
            id BIGSERIAL NOT NULL,
            event_id TEXT COLLATE "C" NOT NULL,
            session_id TEXT COLLATE "C" NOT NULL,
            event_type TEXT COLLATE "C" NOT NULL,
            timestamp TEXT COLLATE "C" NOT NULL,
            model TEXT COLLATE "C",
            tokens_in BIGINT,
            tokens_out BIGINT,
            duration_ms NUMERIC,
            input_data TEXT,
            output_data TEXT,
            tool_call TEXT,
            decision_trace TEXT,
            metadata TEXT,
            agent_name TEXT COLLATE "C",
            tool_name TEXT COLLATE "C",
            is_error INTEGER NOT NULL DEFAULT 0,
            parent_id TEXT COLLATE "C",
            PRIMARY KEY (id, timestamp)
        ) PARTITION BY RANGE (timestamp);
        CREATE TABLE events_default PARTITION OF events DEFAULT;
        CREATE INDEX idx_events_session_ts ON events(session_id, timestamp);
        CREATE INDEX idx_events_ts ON events(timestamp);
        CREATE INDEX idx_events_event_id ON events(event_id);

        CREATE TABLE event_keys (
            event_id TEXT COLLATE "C" PRIMARY KEY
        );
    """)


def _m002(conn: psycopg.Connection) -> None:
    conn.execute("""
        CREATE TABLE alert_rules (
            rule_id TEXT COLLATE "C" PRIMARY KEY,
            name TEXT NOT NULL,
            metric TEXT COLLATE "C" NOT NULL,
            operator TEXT NOT NULL,
            threshold DOUBLE PRECISION NOT NULL,
            window_minutes BIGINT NOT NULL DEFAULT 60,
            cooldown_minutes BIGINT NOT NULL DEFAULT 15,
            agent_filter TEXT COLLATE "C",
            enabled INTEGER NOT NULL DEFAULT 1,
            created_at TEXT COLLATE "C" NOT NULL,
            updated_at TEXT COLLATE "C" NOT NULL,
            last_fired_at TEXT COLLATE "C",
            seq BIGSERIAL
        );
        CREATE TABLE alert_events (
            alert_id TEXT COLLATE "C" PRIMARY KEY,
            rule_id TEXT COLLATE "C" NOT NULL REFERENCES alert_rules(rule_id) ON DELETE CASCADE,
            rule_name TEXT NOT NULL,
            metric TEXT COLLATE "C" NOT NULL,
            operator TEXT NOT NULL,
            threshold DOUBLE PRECISION NOT NULL,
            value DOUBLE PRECISION,
            window_minutes BIGINT NOT NULL,
            agent_filter TEXT COLLATE "C",
            fired_at TEXT COLLATE "C" NOT NULL,
            acknowledged INTEGER NOT NULL DEFAULT 0,
            acknowledged_at TEXT COLLATE "C",
            seq BIGSERIAL
        );
        CREATE INDEX idx_alert_events_fired ON alert_events(fired_at);
        CREATE INDEX idx_alert_events_rule ON alert_events(rule_id, fired_at);

        CREATE TABLE webhooks (
            webhook_id TEXT COLLATE "C" PRIMARY KEY,
            url TEXT NOT NULL,
            format TEXT NOT NULL DEFAULT 'generic',
            secret TEXT,
            routing_key TEXT,
            rule_ids TEXT NOT NULL DEFAULT '[]',
            enabled INTEGER NOT NULL DEFAULT 1,
            created_at TEXT COLLATE "C" NOT NULL,
            updated_at TEXT COLLATE "C" NOT NULL,
            seq BIGSERIAL
        );
        CREATE TABLE webhook_deliveries (
            delivery_id TEXT COLLATE "C" PRIMARY KEY,
            webhook_id TEXT COLLATE "C" NOT NULL REFERENCES webhooks(webhook_id) ON DELETE CASCADE,
            alert_id TEXT COLLATE "C",
            event_type TEXT NOT NULL,
            payload TEXT NOT NULL,
            status TEXT COLLATE "C" NOT NULL DEFAULT 'pending',
            attempts BIGINT NOT NULL DEFAULT 0,
            last_error TEXT,
            last_status_code BIGINT,
            next_attempt_at TEXT COLLATE "C" NOT NULL,
            created_at TEXT COLLATE "C" NOT NULL,
            delivered_at TEXT COLLATE "C",
            seq BIGSERIAL
        );
        CREATE INDEX idx_deliveries_status_next ON webhook_deliveries(status, next_attempt_at);
        CREATE INDEX idx_deliveries_created ON webhook_deliveries(created_at);

        CREATE TABLE sla_targets (
            agent_name TEXT COLLATE "C" NOT NULL,
            metric TEXT COLLATE "C" NOT NULL,
            target_value DOUBLE PRECISION NOT NULL,
            operator TEXT NOT NULL,
            window_hours BIGINT NOT NULL DEFAULT 24,
            created_at TEXT COLLATE "C" NOT NULL,
            updated_at TEXT COLLATE "C" NOT NULL,
            PRIMARY KEY (agent_name, metric)
        );
        CREATE TABLE sla_snapshots (
            id BIGSERIAL PRIMARY KEY,
            agent_name TEXT COLLATE "C" NOT NULL,
            metric TEXT COLLATE "C" NOT NULL,
            operator TEXT NOT NULL,
            target_value DOUBLE PRECISION NOT NULL,
            actual_value DOUBLE PRECISION,
            status TEXT NOT NULL,
            checked_at TEXT COLLATE "C" NOT NULL
        );
        CREATE INDEX idx_sla_snapshots_checked ON sla_snapshots(checked_at);
        CREATE INDEX idx_sla_snapshots_agent ON sla_snapshots(agent_name, checked_at);

        CREATE TABLE otlp_trace_sessions (
            trace_id TEXT COLLATE "C" PRIMARY KEY,
            session_id TEXT COLLATE "C" NOT NULL
        );
    """)


def _m003(conn: psycopg.Connection) -> None:
    conn.execute("""
        CREATE TABLE event_stats (
            event_type TEXT COLLATE "C" NOT NULL,
            hour INTEGER NOT NULL,
            model TEXT COLLATE "C" NOT NULL,
            event_count BIGINT NOT NULL,
            tokens_in BIGINT NOT NULL,
            tokens_out BIGINT NOT NULL,
            duration_sum NUMERIC NOT NULL,
            duration_count BIGINT NOT NULL,
            PRIMARY KEY (event_type, hour, model)
        )
    """)


def _m004(conn: psycopg.Connection) -> None:
    conn.execute("CREATE INDEX idx_sessions_agent_last_event ON sessions(agent_name, last_event_at)")
    conn.execute("CREATE INDEX idx_deliveries_webhook ON webhook_deliveries(webhook_id, created_at)")


def _m005(conn: psycopg.Connection) -> None:
    conn.execute("CREATE INDEX idx_events_session_stats ON events(session_id, event_type, is_error, "
                 "duration_ms, tokens_in, tokens_out, model)")


def _m006(conn: psycopg.Connection) -> None:
    # On SQLite this derived tool_name/is_error for rows stored before the tool_call aliases;
    # a PostgreSQL store was never written by an obsctl without them. Kept by name.
    pass


def _m007(conn: psycopg.Connection) -> None:
    conn.execute("ALTER TABLE sessions ADD COLUMN body_events BIGINT NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE sessions ADD COLUMN error_events BIGINT NOT NULL DEFAULT 0")


def _m008(conn: psycopg.Connection) -> None:
    conn.execute("ALTER TABLE webhooks ADD COLUMN allow_private INTEGER NOT NULL DEFAULT 0")


def _m009(conn: psycopg.Connection) -> None:
    # The rollups of SQLite's m009, kept the same way: session_stats by triggers on sessions
    # (every write to a session keeps it exact), event_totals by the ingest transaction and a
    # trigger on each deleted event.
    conn.execute(_DURATION_FUNCTION)
    duration = "obsctl_duration_ms({row}.started_at, {row}.ended_at)"
    conn.execute(f"""
        CREATE TABLE session_stats (
            day TEXT COLLATE "C" NOT NULL,
            agent_name TEXT COLLATE "C" NOT NULL,
            status TEXT COLLATE "C" NOT NULL,
            sessions BIGINT NOT NULL,
            events BIGINT NOT NULL,
            tokens_in BIGINT NOT NULL,
            tokens_out BIGINT NOT NULL,
            ended BIGINT NOT NULL,
            duration_sum BIGINT NOT NULL,
            PRIMARY KEY (day, agent_name, status)
        );
        CREATE INDEX idx_sessions_duration ON sessions(({SESSION_DURATION_MS})) WHERE ended_at IS NOT NULL;

        CREATE TABLE event_totals (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            events BIGINT NOT NULL,
            max_id BIGINT NOT NULL
        );
        INSERT INTO event_totals VALUES (1, 0, 0);

        CREATE FUNCTION obsctl_event_totals_delete() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE event_totals SET events = events - 1 WHERE id = 1;
            RETURN NULL;
        END $$;
        CREATE TRIGGER event_totals_delete AFTER DELETE ON events
            FOR EACH ROW EXECUTE FUNCTION obsctl_event_totals_delete();

        {_session_stats_function(duration)}
        CREATE FUNCTION obsctl_session_stats() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                PERFORM obsctl_session_stats_add(OLD, -1);
            END IF;
            IF TG_OP IN ('INSERT', 'UPDATE') THEN
                PERFORM obsctl_session_stats_add(NEW, 1);
            END IF;
            RETURN NULL;
        END $$;
        CREATE TRIGGER session_stats_change AFTER INSERT OR DELETE OR UPDATE OF
            agent_name, started_at, ended_at, status, event_count, total_tokens_in, total_tokens_out
            ON sessions FOR EACH ROW EXECUTE FUNCTION obsctl_session_stats();
    """)


def _session_stats_function(duration: str, *, costs: bool = False) -> str:
    """The function the session_stats trigger calls: it adds (sign 1) or takes away (-1) a
    session row in its group. `costs`: with the cost columns of m040 (m009's, without them,
    stays as it was made)."""
    values = updates = ""
    if costs:
        values = (",\n                sign * COALESCE(r.cost_usd, 0), "
                  "sign * (CASE WHEN r.cost_usd IS NOT NULL THEN 1 ELSE 0 END), sign * r.unpriced_calls")
        updates = (",\n                cost_usd = s.cost_usd + excluded.cost_usd, "
                   "priced_sessions = s.priced_sessions + excluded.priced_sessions, "
                   "unpriced_calls = s.unpriced_calls + excluded.unpriced_calls")
    return f"""CREATE {'OR REPLACE ' if costs else ''}FUNCTION obsctl_session_stats_add(r sessions, sign INTEGER) RETURNS void
        LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO session_stats AS s VALUES (
                substr(r.started_at, 1, 10), r.agent_name, r.status, sign,
                sign * r.event_count, sign * r.total_tokens_in, sign * r.total_tokens_out,
                sign * (CASE WHEN r.ended_at IS NOT NULL THEN 1 ELSE 0 END),
                sign * COALESCE(CASE WHEN r.ended_at IS NOT NULL THEN {duration.format(row='r')} END, 0){values})
            ON CONFLICT (day, agent_name, status) DO UPDATE SET
                sessions = s.sessions + excluded.sessions, events = s.events + excluded.events,
                tokens_in = s.tokens_in + excluded.tokens_in,
                tokens_out = s.tokens_out + excluded.tokens_out,
                ended = s.ended + excluded.ended, duration_sum = s.duration_sum + excluded.duration_sum{updates};
        END $$;"""


# (name, apply): the names of obsctl/store/sqlite/schema.py's migrations, in order.
def _m010(conn: psycopg.Connection) -> None:
    # SQLite's m010: the sessions list's order as an index, which the list walks alone to its
    # page (an index-only scan) before reading the page's rows.
    conn.execute("DROP INDEX idx_sessions_started")
    conn.execute("CREATE INDEX idx_sessions_started ON sessions(started_at DESC, session_id)")
    conn.execute("DROP INDEX idx_sessions_status_started")
    conn.execute("CREATE INDEX idx_sessions_status_started ON sessions(status, started_at DESC, session_id)")


def _m011(conn: psycopg.Connection) -> None:
    # SQLite's m011: the error events by time, for incidents across sessions.
    conn.execute("CREATE INDEX idx_events_errors_ts ON events(timestamp) WHERE is_error = 1")


def _m012(conn: psycopg.Connection) -> None:
    # SQLite's m012: alerts are resolved when their rule's condition no longer holds.
    conn.execute('ALTER TABLE alert_events ADD COLUMN resolved_at TEXT COLLATE "C"')
    conn.execute("CREATE INDEX idx_alert_events_open ON alert_events(rule_id) WHERE resolved_at IS NULL")


def _m013(conn: psycopg.Connection) -> None:
    # SQLite's m013: a rule's severity, warning for the rules made before it.
    conn.execute("ALTER TABLE alert_rules ADD COLUMN severity TEXT NOT NULL DEFAULT 'warning'")


def _m016(conn: psycopg.Connection) -> None:
    # SQLite's m016: session tags and scores, deleted with their session (the cascade).
    conn.execute("""
        CREATE TABLE session_tags (
            session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
            key TEXT COLLATE "C" NOT NULL,
            value TEXT COLLATE "C" NOT NULL,
            PRIMARY KEY (session_id, key)
        );
        CREATE INDEX idx_session_tags_key_value ON session_tags(key, value, session_id);

        CREATE TABLE session_scores (
            score_id TEXT COLLATE "C" PRIMARY KEY,
            session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
            name TEXT COLLATE "C" NOT NULL,
            value DOUBLE PRECISION NOT NULL,
            comment TEXT,
            created_at TEXT COLLATE "C" NOT NULL
        );
        CREATE INDEX idx_session_scores_session ON session_scores(session_id, created_at);
        CREATE INDEX idx_session_scores_name_created ON session_scores(name, created_at);
    """)


def _m017(conn: psycopg.Connection) -> None:
    # SQLite's m017: idle-completed sessions are marked (a later event reopens them), and the
    # active sessions are indexed by last activity for the idle sweep.
    conn.execute("ALTER TABLE sessions ADD COLUMN idle_ended INTEGER NOT NULL DEFAULT 0")
    conn.execute('ALTER TABLE sessions ADD COLUMN last_seen_at TEXT COLLATE "C"')
    conn.execute("CREATE INDEX idx_sessions_active_last_event ON sessions(last_event_at, session_id) WHERE status = 'active'")


def _m018(conn: psycopg.Connection) -> None:
    # SQLite's m018: the dashboard's generated signing key, one row.
    conn.execute("CREATE TABLE dashboard_secret (id INTEGER PRIMARY KEY CHECK (id = 1), "
                 'secret TEXT NOT NULL, created_at TEXT COLLATE "C" NOT NULL)')


def _m019(conn: psycopg.Connection) -> None:
    # SQLite's m019: acknowledged changes of an agent's configuration.
    conn.execute("""
        CREATE TABLE change_acks (
            change_id TEXT COLLATE "C" PRIMARY KEY,
            agent_name TEXT COLLATE "C" NOT NULL,
            changed_at TEXT COLLATE "C" NOT NULL,
            acknowledged_at TEXT COLLATE "C" NOT NULL,
            note TEXT
        )""")


def _m020(conn: psycopg.Connection) -> None:
    # Follow order (store/postgres/events.py): the transaction that stored each event. Ids come
    # from a sequence and concurrent transactions commit them out of order, so "ids above N"
    # can miss an event committed after a reader passed its id; (ingest_xid, id) read below the
    # oldest running transaction cannot. Events stored before this read as transaction 1. The
    # constant default adds the column without rewriting the table; the stable function after
    # it keeps COPY's multi-row inserts.
    conn.execute("ALTER TABLE events ADD COLUMN ingest_xid xid8 NOT NULL DEFAULT '1'")
    conn.execute("ALTER TABLE events ALTER COLUMN ingest_xid SET DEFAULT pg_current_xact_id()")
    conn.execute("CREATE INDEX idx_events_ingest_order ON events(ingest_xid, id)")


def _m021(conn: psycopg.Connection) -> None:
    # Costs stored at ingest (see the SQLite migration of the same name).
    import obsctl.store.cost_sql as cost_sql

    conn.execute("ALTER TABLE events ADD COLUMN cost_usd DOUBLE PRECISION")
    conn.execute("ALTER TABLE sessions ADD COLUMN cost_usd DOUBLE PRECISION")
    conn.execute("ALTER TABLE sessions ADD COLUMN unpriced_calls BIGINT NOT NULL DEFAULT 0")
    conn.execute("""CREATE TABLE cost_prices (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        prices TEXT NOT NULL,
                        mixed INTEGER NOT NULL DEFAULT 0,
                        updated_at TEXT COLLATE "C" NOT NULL,
                        repriced_at TEXT COLLATE "C")""")
    conn.execute(cost_sql.SESSION_COSTS + " WHERE EXISTS (SELECT 1 FROM events e WHERE e.session_id = sessions.session_id)")
    conn.execute(cost_sql.NOT_COSTED.format(
        p="%s", now="to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"))


def _m022(conn: psycopg.Connection) -> None:
    # SQLite's m022 (full-text search, store/postgres/search.py): the english tsvector of the
    # four text columns, stored (a generated column, computed by every write) and GIN-indexed
    # per partition. Stored rather than an expression index: a search filtered by time tests
    # the vector of each event in the window, and computing it from the text again costs about
    # 0.15 ms an event. Adding the column rewrites the events, and CREATE INDEX reads them
    # once (not in batches, unlike SQLite).
    from obsctl.store.postgres import search

    conn.execute(search.CREATE_FUNCTION_M022)  # each column cut at INDEXED_CHARS since m025
    conn.execute(f"ALTER TABLE events ADD COLUMN search_vector tsvector "
                 f"GENERATED ALWAYS AS ({search.VECTOR}) STORED")
    conn.execute("CREATE INDEX idx_events_search ON events USING GIN (search_vector)")


def _m024(conn: psycopg.Connection) -> None:
    # The session list's filters on events (store/session_filter_sql.py): "sessions with an
    # event of model M / a call of tool T / an error event of type E" read the session ids
    # from these covering ranges instead of every event. On SQLite at 1M events: model 182 -> 51 ms,
    # tool 422 -> 59 ms, error type 150 -> 21 ms for a page (its count likewise).
    conn.execute("CREATE INDEX idx_events_model_session ON events(model, session_id) WHERE model IS NOT NULL")
    conn.execute("CREATE INDEX idx_events_tool_session ON events(tool_name, session_id) WHERE tool_name IS NOT NULL")
    conn.execute("CREATE INDEX idx_events_error_type_session ON events(event_type, session_id) WHERE is_error = 1")


def _m025(conn: psycopg.Connection) -> None:
    # SQLite's m025 (issue 32): the vector holds the first INDEXED_CHARS characters of each
    # column (store/search_text.py) instead of the first 100,000 of the four together, so
    # that a long input leaves the output indexed. The function is replaced and only the
    # events whose vector changes are written again (store/postgres/search.py).
    from obsctl.store.postgres import search

    search.cap_indexed_text(conn)


def _m029(conn: psycopg.Connection) -> None:
    # SQLite's m029: the dashboard's logins, one row per browser that logged in.
    conn.execute('CREATE TABLE dashboard_logins (token_hash TEXT COLLATE "C" PRIMARY KEY, '
                 'key_proof TEXT NOT NULL, created_at TEXT COLLATE "C" NOT NULL, '
                 'last_seen_at TEXT COLLATE "C" NOT NULL)')


def _m027(conn: psycopg.Connection) -> None:
    # SQLite's m027: tool_name joins the index a session's summary groups by.
    conn.execute("DROP INDEX IF EXISTS idx_events_session_stats")
    conn.execute("CREATE INDEX idx_events_session_stats ON events(session_id, event_type, is_error, "
                 "duration_ms, tokens_in, tokens_out, model, tool_name)")


def _m028(conn: psycopg.Connection) -> None:
    # SQLite's m028: the columns in the order a session's breakdown groups them.
    conn.execute("DROP INDEX IF EXISTS idx_events_session_stats")
    conn.execute("CREATE INDEX idx_events_session_stats ON events(session_id, event_type, model, tool_name, "
                 "is_error, duration_ms, tokens_in, tokens_out)")


def _m039(conn: psycopg.Connection) -> None:
    # SQLite's m039: the rollup keeps the costs, filled again from the events.
    from obsctl.store.postgres import event_stats

    conn.execute("ALTER TABLE event_stats ADD COLUMN cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0, "
                 "ADD COLUMN priced_calls BIGINT NOT NULL DEFAULT 0, "
                 "ADD COLUMN unpriced_calls BIGINT NOT NULL DEFAULT 0")
    event_stats.rebuild(conn)


def _m040(conn: psycopg.Connection) -> None:
    # SQLite's m040: session_stats keeps the sessions' costs; the trigger adds them too.
    import obsctl.store.cost_sql as cost_sql

    duration = "obsctl_duration_ms({row}.started_at, {row}.ended_at)"
    conn.execute("ALTER TABLE session_stats ADD COLUMN cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0, "
                 "ADD COLUMN priced_sessions BIGINT NOT NULL DEFAULT 0, "
                 "ADD COLUMN unpriced_calls BIGINT NOT NULL DEFAULT 0")
    conn.execute(f"UPDATE session_stats SET {cost_sql.SESSION_STATS_COSTS_SET} FROM ({cost_sql.SESSION_STATS_COSTS}) "
                 "AS x WHERE session_stats.day = x.day AND session_stats.agent_name = x.agent_name "
                 "AND session_stats.status = x.status")
    conn.execute(f"""
        {_session_stats_function(duration, costs=True)}
        DROP TRIGGER session_stats_change ON sessions;
        CREATE TRIGGER session_stats_change AFTER INSERT OR DELETE OR UPDATE OF
            agent_name, started_at, ended_at, status, event_count, total_tokens_in, total_tokens_out,
            cost_usd, unpriced_calls
            ON sessions FOR EACH ROW EXECUTE FUNCTION obsctl_session_stats();
    """)


MIGRATIONS: list[tuple[str, Callable[[psycopg.Connection], None]]] = [
    ("m001_sessions_and_events", _m001),
    ("m002_alerts_webhooks_sla", _m002),
    ("m003_analytics_event_stats", _m003),
    ("m004_alert_metric_and_delivery_indexes", _m004),
    ("m005_scorecard_event_stats_index", _m005),
    ("m006_tool_call_aliases", _m006),
    ("m007_session_body_event_counts", _m007),
    ("m008_webhook_allow_private", _m008),
    ("m009_analytics_counters", _m009),
    ("m010_sessions_newest_first", _m010),
    ("m011_events_errors_index", _m011),
    ("m012_alert_resolution", _m012),
    ("m013_rule_severity", _m013),
    ("m016_session_tags_and_scores", _m016),
    ("m017_session_idle_completion", _m017),
    ("m018_dashboard_secret", _m018),
    ("m019_change_acks", _m019),
    ("m020_events_ingest_order", _m020),
    ("m021_session_costs", _m021),
    ("m022_event_search", _m022),
    ("m024_session_filter_indexes", _m024),
    ("m025_search_indexed_text_cap", _m025),
    ("m029_dashboard_logins", _m029),
    ("m027_session_breakdown_index", _m027),
    ("m028_session_breakdown_order", _m028),
    ("m039_event_stats_costs", _m039),
    ("m040_session_stats_costs", _m040),
]


def applied(conn: psycopg.Connection) -> list[str]:
    """Names of the migrations applied to the schema `conn` works in ([] for a new one)."""
    exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", [MIGRATIONS_TABLE]).fetchone()[0]
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
        if conn.execute("SELECT current_schema()").fetchone()[0] is None:
            # The URL names a schema (options=-csearch_path=NAME) that does not exist yet.
            name = conn.execute("SELECT trim(both '\"' from split_part(current_setting('search_path'), ',', 1))"
                                ).fetchone()[0]
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
