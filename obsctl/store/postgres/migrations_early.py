"""The PostgreSQL migrations m001 to m013 (obsctl/store/postgres/schema.py lists and applies
them): the tables, the analytics rollups and their triggers, the first indexes."""

from __future__ import annotations

import psycopg

from obsctl.store.sql.sessions import SESSION_DURATION_MS as SESSION_DURATIONS

# Wall-clock duration of an ended session in whole milliseconds, as SQLite's julianday
# expression computes it (analytics.py uses the same text for the index to serve it).
SESSION_DURATION_MS = SESSION_DURATIONS["postgresql"]  # created as a function by m002
# Immutable in fact: obsctl's timestamps are UTC ISO-8601 text, and the function fixes the
# time zone it parses them in, so the index on it (m009) stays valid.
_DURATION_FUNCTION = """
CREATE FUNCTION obsctl_duration_ms(started TEXT, ended TEXT) RETURNS BIGINT
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET TimeZone = 'UTC' AS $$
    SELECT GREATEST(0, ROUND(EXTRACT(EPOCH FROM (ended::timestamptz - started::timestamptz)) * 1000)::bigint)
$$
"""


def m001(conn: psycopg.Connection) -> None:
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


def m002(conn: psycopg.Connection) -> None:
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


def m003(conn: psycopg.Connection) -> None:
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


def m004(conn: psycopg.Connection) -> None:
    conn.execute("CREATE INDEX idx_sessions_agent_last_event ON sessions(agent_name, last_event_at)")
    conn.execute("CREATE INDEX idx_deliveries_webhook ON webhook_deliveries(webhook_id, created_at)")


def m005(conn: psycopg.Connection) -> None:
    conn.execute("CREATE INDEX idx_events_session_stats ON events(session_id, event_type, is_error, "
                 "duration_ms, tokens_in, tokens_out, model)")


def m006(conn: psycopg.Connection) -> None:
    # On SQLite this derived tool_name/is_error for rows stored before the tool_call aliases;
    # a PostgreSQL store was never written by an obsctl without them. Kept by name.
    pass


def m007(conn: psycopg.Connection) -> None:
    conn.execute("ALTER TABLE sessions ADD COLUMN body_events BIGINT NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE sessions ADD COLUMN error_events BIGINT NOT NULL DEFAULT 0")


def m008(conn: psycopg.Connection) -> None:
    conn.execute("ALTER TABLE webhooks ADD COLUMN allow_private INTEGER NOT NULL DEFAULT 0")


def m009(conn: psycopg.Connection) -> None:
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
def m010(conn: psycopg.Connection) -> None:
    # SQLite's m010: the sessions list's order as an index, which the list walks alone to its
    # page (an index-only scan) before reading the page's rows.
    conn.execute("DROP INDEX idx_sessions_started")
    conn.execute("CREATE INDEX idx_sessions_started ON sessions(started_at DESC, session_id)")
    conn.execute("DROP INDEX idx_sessions_status_started")
    conn.execute("CREATE INDEX idx_sessions_status_started ON sessions(status, started_at DESC, session_id)")


def m011(conn: psycopg.Connection) -> None:
    # SQLite's m011: the error events by time, for incidents across sessions.
    conn.execute("CREATE INDEX idx_events_errors_ts ON events(timestamp) WHERE is_error = 1")


def m012(conn: psycopg.Connection) -> None:
    # SQLite's m012: alerts are resolved when their rule's condition no longer holds.
    conn.execute('ALTER TABLE alert_events ADD COLUMN resolved_at TEXT COLLATE "C"')
    conn.execute("CREATE INDEX idx_alert_events_open ON alert_events(rule_id) WHERE resolved_at IS NULL")


def m013(conn: psycopg.Connection) -> None:
    # SQLite's m013: a rule's severity, warning for the rules made before it.
    conn.execute("ALTER TABLE alert_rules ADD COLUMN severity TEXT NOT NULL DEFAULT 'warning'")
