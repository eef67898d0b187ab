"""The PostgreSQL migrations from m016 on (obsctl/store/postgres/schema.py lists and applies
them): tags and scores, idle sessions, costs, search, the session filters, dashboard logins,
the breakdown index and the cost rollups."""

from __future__ import annotations

import psycopg

from obsctl.store.postgres.migrations_early import _session_stats_function


def m016(conn: psycopg.Connection) -> None:
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


def m017(conn: psycopg.Connection) -> None:
    # SQLite's m017: idle-completed sessions are marked (a later event reopens them), and the
    # active sessions are indexed by last activity for the idle sweep.
    conn.execute("ALTER TABLE sessions ADD COLUMN idle_ended INTEGER NOT NULL DEFAULT 0")
    conn.execute('ALTER TABLE sessions ADD COLUMN last_seen_at TEXT COLLATE "C"')
    conn.execute("CREATE INDEX idx_sessions_active_last_event ON sessions(last_event_at, session_id) WHERE status = 'active'")


def m018(conn: psycopg.Connection) -> None:
    # SQLite's m018: the dashboard's generated signing key, one row.
    conn.execute("CREATE TABLE dashboard_secret (id INTEGER PRIMARY KEY CHECK (id = 1), "
                 'secret TEXT NOT NULL, created_at TEXT COLLATE "C" NOT NULL)')


def m019(conn: psycopg.Connection) -> None:
    # SQLite's m019: acknowledged changes of an agent's configuration.
    conn.execute("""
        CREATE TABLE change_acks (
            change_id TEXT COLLATE "C" PRIMARY KEY,
            agent_name TEXT COLLATE "C" NOT NULL,
            changed_at TEXT COLLATE "C" NOT NULL,
            acknowledged_at TEXT COLLATE "C" NOT NULL,
            note TEXT
        )""")


def m020(conn: psycopg.Connection) -> None:
    # Follow order (store/postgres/events.py): the transaction that stored each event. Ids come
    # from a sequence and concurrent transactions commit them out of order, so "ids above N"
    # can miss an event committed after a reader passed its id; (ingest_xid, id) read below the
    # oldest running transaction cannot. Events stored before this read as transaction 1. The
    # constant default adds the column without rewriting the table; the stable function after
    # it keeps COPY's multi-row inserts.
    conn.execute("ALTER TABLE events ADD COLUMN ingest_xid xid8 NOT NULL DEFAULT '1'")
    conn.execute("ALTER TABLE events ALTER COLUMN ingest_xid SET DEFAULT pg_current_xact_id()")
    conn.execute("CREATE INDEX idx_events_ingest_order ON events(ingest_xid, id)")


def m021(conn: psycopg.Connection) -> None:
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


def m022(conn: psycopg.Connection) -> None:
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


def m024(conn: psycopg.Connection) -> None:
    # The session list's filters on events (store/session_filter_sql.py): "sessions with an
    # event of model M / a call of tool T / an error event of type E" read the session ids
    # from these covering ranges instead of every event. On SQLite at 1M events: model 182 -> 51 ms,
    # tool 422 -> 59 ms, error type 150 -> 21 ms for a page (its count likewise).
    conn.execute("CREATE INDEX idx_events_model_session ON events(model, session_id) WHERE model IS NOT NULL")
    conn.execute("CREATE INDEX idx_events_tool_session ON events(tool_name, session_id) WHERE tool_name IS NOT NULL")
    conn.execute("CREATE INDEX idx_events_error_type_session ON events(event_type, session_id) WHERE is_error = 1")


def m025(conn: psycopg.Connection) -> None:
    # SQLite's m025 (issue 32): the vector holds the first INDEXED_CHARS characters of each
    # column (store/search_text.py) instead of the first 100,000 of the four together, so
    # that a long input leaves the output indexed. The function is replaced and only the
    # events whose vector changes are written again (store/postgres/search.py).
    from obsctl.store.postgres import search

    search.cap_indexed_text(conn)


def m029(conn: psycopg.Connection) -> None:
    # SQLite's m029: the dashboard's logins, one row per browser that logged in.
    conn.execute('CREATE TABLE dashboard_logins (token_hash TEXT COLLATE "C" PRIMARY KEY, '
                 'key_proof TEXT NOT NULL, created_at TEXT COLLATE "C" NOT NULL, '
                 'last_seen_at TEXT COLLATE "C" NOT NULL)')


def m027(conn: psycopg.Connection) -> None:
    # SQLite's m027: tool_name joins the index a session's summary groups by.
    conn.execute("DROP INDEX IF EXISTS idx_events_session_stats")
    conn.execute("CREATE INDEX idx_events_session_stats ON events(session_id, event_type, is_error, "
                 "duration_ms, tokens_in, tokens_out, model, tool_name)")


def m028(conn: psycopg.Connection) -> None:
    # SQLite's m028: the columns in the order a session's breakdown groups them.
    conn.execute("DROP INDEX IF EXISTS idx_events_session_stats")
    conn.execute("CREATE INDEX idx_events_session_stats ON events(session_id, event_type, model, tool_name, "
                 "is_error, duration_ms, tokens_in, tokens_out)")


def m039(conn: psycopg.Connection) -> None:
    # SQLite's m039: the rollup keeps the costs, filled again from the events.
    from obsctl.store.postgres import event_stats

    conn.execute("ALTER TABLE event_stats ADD COLUMN cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0, "
                 "ADD COLUMN priced_calls BIGINT NOT NULL DEFAULT 0, "
                 "ADD COLUMN unpriced_calls BIGINT NOT NULL DEFAULT 0")
    event_stats.rebuild(conn)


def m040(conn: psycopg.Connection) -> None:
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


def m031(conn: psycopg.Connection) -> None:
    # SQLite's m031: cache read, cache write and reasoning tokens per event, session and rollup row.
    columns = ("tokens_cache_read", "tokens_cache_write", "tokens_reasoning")
    conn.execute("ALTER TABLE events " + ", ".join(f"ADD COLUMN {c} BIGINT" for c in columns))
    conn.execute("ALTER TABLE sessions " + ", ".join(f"ADD COLUMN total_{c} BIGINT NOT NULL DEFAULT 0"
                                                     for c in columns))
    conn.execute("ALTER TABLE event_stats " + ", ".join(f"ADD COLUMN {c} BIGINT NOT NULL DEFAULT 0"
                                                        for c in columns))


def m032(conn: psycopg.Connection) -> None:
    # SQLite's m032: background sessions (work outside any agent run).
    conn.execute("ALTER TABLE sessions ADD COLUMN background SMALLINT NOT NULL DEFAULT 0")


def m033(conn: psycopg.Connection) -> None:
    # SQLite's m033: the cache and reasoning token columns join the breakdown's index.
    conn.execute("DROP INDEX IF EXISTS idx_events_session_stats")
    conn.execute("CREATE INDEX idx_events_session_stats ON events(session_id, event_type, model, tool_name, "
                 "is_error, duration_ms, tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, "
                 "tokens_reasoning)")


def m034(conn: psycopg.Connection) -> None:
    # SQLite's m034: each tool call's key; a session's tool calls, and its errors, in order.
    conn.execute("ALTER TABLE events ADD COLUMN tool_key BIGINT")
    conn.execute("CREATE INDEX idx_events_session_tools ON events(session_id, timestamp, id, is_error, tool_key) "
                 "WHERE tool_name IS NOT NULL AND event_type NOT IN ('session_start', 'session_end')")
    conn.execute("CREATE INDEX idx_events_session_errors ON events(session_id, timestamp, id) WHERE is_error = 1")


def m036(conn: psycopg.Connection) -> None:
    # SQLite's m036 moves its search indexing after the ingest commit. PostgreSQL's index is a
    # generated tsvector column (m022), computed as each row is written: nothing to move.
    pass
