"""The SQLite migrations m001 to m013 (obsctl/store/sqlite/schema.py registers them in order):
the tables, the analytics rollups and their triggers, the first indexes. Append-only: never
edit an applied one."""

from __future__ import annotations


def m001_sessions_and_events(db):
    db.executescript(
        """
        CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            agent_name TEXT NOT NULL DEFAULT 'unknown',
            started_at TEXT NOT NULL,
            ended_at TEXT,
            metadata TEXT,
            total_tokens_in INTEGER NOT NULL DEFAULT 0,
            total_tokens_out INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'active',
            event_count INTEGER NOT NULL DEFAULT 0,
            error_count INTEGER NOT NULL DEFAULT 0,
            total_duration_ms REAL NOT NULL DEFAULT 0,
            last_event_at TEXT
        );
        CREATE INDEX idx_sessions_started ON sessions(started_at);
        CREATE INDEX idx_sessions_agent_started ON sessions(agent_name, started_at);
        CREATE INDEX idx_sessions_status_started ON sessions(status, started_at);
        CREATE INDEX idx_sessions_last_event ON sessions(last_event_at);

        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            event_id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
            event_type TEXT NOT NULL,
            timestamp TEXT NOT NULL,
            model TEXT,
            tokens_in INTEGER,
            tokens_out INTEGER,
            duration_ms NUMERIC,
            input_data TEXT,
            output_data TEXT,
            tool_call TEXT,
            decision_trace TEXT,
            metadata TEXT,
            agent_name TEXT,
            tool_name TEXT,
            is_error INTEGER NOT NULL DEFAULT 0,
            parent_id TEXT
        );
        CREATE INDEX idx_events_session_ts ON events(session_id, timestamp);
        CREATE INDEX idx_events_ts ON events(timestamp);
        """
    )


def m002_alerts_webhooks_sla(db):
    db.executescript(
        """
        CREATE TABLE alert_rules (
            rule_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            metric TEXT NOT NULL,
            operator TEXT NOT NULL,
            threshold REAL NOT NULL,
            window_minutes INTEGER NOT NULL DEFAULT 60,
            cooldown_minutes INTEGER NOT NULL DEFAULT 15,
            agent_filter TEXT,
            enabled INTEGER NOT NULL DEFAULT 1,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            last_fired_at TEXT
        );
        CREATE TABLE alert_events (
            alert_id TEXT PRIMARY KEY,
            rule_id TEXT NOT NULL REFERENCES alert_rules(rule_id) ON DELETE CASCADE,
            rule_name TEXT NOT NULL,
            metric TEXT NOT NULL,
            operator TEXT NOT NULL,
            threshold REAL NOT NULL,
            value REAL,
            window_minutes INTEGER NOT NULL,
            agent_filter TEXT,
            fired_at TEXT NOT NULL,
            acknowledged INTEGER NOT NULL DEFAULT 0,
            acknowledged_at TEXT
        );
        CREATE INDEX idx_alert_events_fired ON alert_events(fired_at);
        CREATE INDEX idx_alert_events_rule ON alert_events(rule_id, fired_at);

        CREATE TABLE webhooks (
            webhook_id TEXT PRIMARY KEY,
            url TEXT NOT NULL,
            format TEXT NOT NULL DEFAULT 'generic',
            secret TEXT,
            routing_key TEXT,
            rule_ids TEXT NOT NULL DEFAULT '[]',
            enabled INTEGER NOT NULL DEFAULT 1,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE webhook_deliveries (
            delivery_id TEXT PRIMARY KEY,
            webhook_id TEXT NOT NULL REFERENCES webhooks(webhook_id) ON DELETE CASCADE,
            alert_id TEXT,
            event_type TEXT NOT NULL,
            payload TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            last_status_code INTEGER,
            next_attempt_at TEXT NOT NULL,
            created_at TEXT NOT NULL,
            delivered_at TEXT
        );
        CREATE INDEX idx_deliveries_status_next ON webhook_deliveries(status, next_attempt_at);
        CREATE INDEX idx_deliveries_created ON webhook_deliveries(created_at);

        CREATE TABLE sla_targets (
            agent_name TEXT NOT NULL,
            metric TEXT NOT NULL,
            target_value REAL NOT NULL,
            operator TEXT NOT NULL,
            window_hours INTEGER NOT NULL DEFAULT 24,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (agent_name, metric)
        );
        CREATE TABLE sla_snapshots (
            id INTEGER PRIMARY KEY,
            agent_name TEXT NOT NULL,
            metric TEXT NOT NULL,
            operator TEXT NOT NULL,
            target_value REAL NOT NULL,
            actual_value REAL,
            status TEXT NOT NULL,
            checked_at TEXT NOT NULL
        );
        CREATE INDEX idx_sla_snapshots_checked ON sla_snapshots(checked_at);
        CREATE INDEX idx_sla_snapshots_agent ON sla_snapshots(agent_name, checked_at);

        CREATE TABLE otlp_trace_sessions (
            trace_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL
        );
        """
    )


def m003_analytics_event_stats(db):
    # Rollup behind the analytics event sections, maintained by the ingest transaction. The
    # backfill is this migration's own (m039 adds the cost columns and fills them again).
    from obsctl.store.sqlite import event_stats

    db.execute(event_stats.CREATE_TABLE)
    db.execute("""
        INSERT INTO event_stats (event_type, hour, model, event_count, tokens_in, tokens_out,
                                 duration_sum, duration_count)
        SELECT event_type, CAST(substr(timestamp, 12, 2) AS INTEGER), COALESCE(model, ''), COUNT(*),
               COALESCE(SUM(tokens_in), 0), COALESCE(SUM(tokens_out), 0),
               COALESCE(SUM(duration_ms), 0), COUNT(duration_ms)
        FROM events
        GROUP BY 1, 2, 3""")


def m004_alert_metric_and_delivery_indexes(db):
    # Agent-filtered metrics (alert rules, SLA targets) start from the agent's sessions still
    # active in the window: without this they probe every session the agent ever had.
    db.execute("CREATE INDEX idx_sessions_agent_last_event ON sessions(agent_name, last_event_at)")
    # Deleting a webhook cascades to its deliveries, and the delivery log filters by webhook:
    # both would scan webhook_deliveries without this index.
    db.execute("CREATE INDEX idx_deliveries_webhook ON webhook_deliveries(webhook_id, created_at)")


def m005_scorecard_event_stats_index(db):
    # Scorecards read every event of a window's sessions (about 230k rows for 7 days of the
    # 1M-event benchmark). Covering the columns they read spares the event rows with their
    # JSON payloads: about 440 -> 330 ms for the 20 scorecards, for one more index on ingest.
    db.execute("CREATE INDEX idx_events_session_stats ON events(session_id, event_type, is_error, "
               "duration_ms, tokens_in, tokens_out, model)")


def m006_tool_call_aliases(db):
    # tool_call may spell its keys tool_name/tool_input/tool_output (the original service's
    # SDK does), and an `error` inside tool_output makes the event an error. Rows stored
    # before have tool_name NULL (and is_error 0 for such a failure): derive both as ingest
    # now does, and move sessions.error_count with is_error (the only rollup that reads it).
    # Frozen on purpose: a migration applies the rule of its own time, whatever later code says.
    import orjson

    conn = db.conn
    updates, error_deltas = [], {}
    rows = conn.execute(
        r"""SELECT id, session_id, tool_call, tool_name, is_error FROM events
            WHERE tool_call LIKE '%"tool\_%' ESCAPE '\'"""
    )
    for row_id, session_id, tool_call, tool_name, is_error in rows:
        call = orjson.loads(tool_call)
        if type(call) is not dict:
            continue
        name = tool_name
        if name is None:
            name = call.get("name")
            if name is None:
                name = call.get("tool_name")
            if name is not None and type(name) is not str:
                name = str(name)[:256]  # as ingest stores a non-string name
        error = is_error
        output = call.get("tool_output")
        if not error and type(output) is dict and output.get("error"):
            error = 1
            error_deltas[session_id] = error_deltas.get(session_id, 0) + 1
        if name != tool_name or error != is_error:
            updates.append((name, error, row_id))
    conn.executemany("UPDATE events SET tool_name = ?, is_error = ? WHERE id = ?", updates)
    conn.executemany("UPDATE sessions SET error_count = error_count + ? WHERE session_id = ?",
                     [(n, sid) for sid, n in error_deltas.items()])


def m007_session_body_event_counts(db):
    # The events of a session other than session_start/session_end, and the errors among
    # them: the denominator and numerator of the session's error event rate (services/
    # rates.py). Kept by the ingest transaction like the other totals, so that the
    # postmortem candidates rank every session without reading its events. Backfilled
    # through idx_events_session_stats (about a second at 1M events).
    db.execute("ALTER TABLE sessions ADD COLUMN body_events INTEGER NOT NULL DEFAULT 0")
    db.execute("ALTER TABLE sessions ADD COLUMN error_events INTEGER NOT NULL DEFAULT 0")
    db.execute(
        """
        UPDATE sessions SET
            body_events = event_count - (
                SELECT COUNT(*) FROM events e WHERE e.session_id = sessions.session_id
                AND e.event_type IN ('session_start', 'session_end')),
            error_events = error_count - (
                SELECT COUNT(*) FROM events e WHERE e.session_id = sessions.session_id
                AND e.event_type IN ('session_start', 'session_end') AND e.is_error = 1)
        """
    )


def m008_webhook_allow_private(db):
    # Whether private and loopback destinations were allowed when the webhook's URL was set,
    # so that a sender started without OBSCTL_WEBHOOK_ALLOW_PRIVATE (a cron job) honours the
    # decision instead of failing the delivery. Existing webhooks keep the sender's setting.
    db.execute("ALTER TABLE webhooks ADD COLUMN allow_private INTEGER NOT NULL DEFAULT 0")


def m009_analytics_counters(db):
    # GET /analytics read every session (overview, top agents, sessions by day) and counted
    # every event (to check the event_stats rollup) on each call: 0.8 s at 10M events. Two
    # rollups kept in the writing transaction replace those scans:
    # - session_stats: sessions, events and tokens per (start day, agent, status), and the
    #   wall-clock durations of ended sessions, kept by triggers on `sessions`, so that every
    #   write to a session (ingest, OTLP, prune, a repair) keeps it exact;
    # - event_totals: the number of stored events and the highest event id, added to by the
    #   ingest transaction and decremented by a trigger on each deleted event, so the check
    #   that event_stats counts every event reads two small rows.
    # The durations' minimum and maximum come from an index on the same expression.
    # Frozen on purpose (the expression text must equal store/sqlite/analytics.py's for the index).
    duration = ("MAX(0, CAST(ROUND((julianday({0}ended_at) - julianday({0}started_at)) * 86400000.0) "
                "AS INTEGER))")
    db.executescript(f"""
        CREATE TABLE session_stats (
            day TEXT NOT NULL,
            agent_name TEXT NOT NULL,
            status TEXT NOT NULL,
            sessions INTEGER NOT NULL,
            events INTEGER NOT NULL,
            tokens_in INTEGER NOT NULL,
            tokens_out INTEGER NOT NULL,
            ended INTEGER NOT NULL,
            duration_sum INTEGER NOT NULL,
            PRIMARY KEY (day, agent_name, status)
        ) WITHOUT ROWID;
        INSERT INTO session_stats
        SELECT substr(started_at, 1, 10), agent_name, status, COUNT(*), SUM(event_count),
               SUM(total_tokens_in), SUM(total_tokens_out), COUNT(ended_at),
               COALESCE(SUM(CASE WHEN ended_at IS NOT NULL THEN {duration.format('')} END), 0)
        FROM sessions GROUP BY 1, 2, 3;
        CREATE INDEX idx_sessions_duration ON sessions({duration.format('')}) WHERE ended_at IS NOT NULL;

        CREATE TABLE event_totals (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            events INTEGER NOT NULL,
            max_id INTEGER NOT NULL
        );
        INSERT INTO event_totals SELECT 1, COUNT(*), COALESCE(MAX(id), 0) FROM events;
        CREATE TRIGGER event_totals_delete AFTER DELETE ON events
        BEGIN
            UPDATE event_totals SET events = events - 1 WHERE id = 1;
        END;
    """)
    # A session that stays in its group (most updates: events added to it) moves the group's
    # totals by the difference, in one statement; one that changes group leaves the old group
    # and joins the new one.
    same = "substr(OLD.started_at, 1, 10) = substr(NEW.started_at, 1, 10) AND " \
           "OLD.agent_name = NEW.agent_name AND OLD.status = NEW.status"
    columns = "agent_name, started_at, ended_at, status, event_count, total_tokens_in, total_tokens_out"
    triggers = (
        ("insert", "INSERT", "", _session_stats_change("NEW", None, duration)),
        ("update_in_group", f"UPDATE OF {columns}", f"WHEN {same}", _session_stats_change("NEW", "OLD", duration)),
        ("update_moved", f"UPDATE OF {columns}", f"WHEN NOT ({same})",
         _session_stats_change(None, "OLD", duration) + _session_stats_change("NEW", None, duration)),
        ("delete", "DELETE", "", _session_stats_change(None, "OLD", duration)),
    )
    for name, event, when, body in triggers:
        db.execute(f"CREATE TRIGGER session_stats_{name} AFTER {event} ON sessions {when} BEGIN {body} END")


def m010_sessions_newest_first(db):
    # The sessions list reads newest first with the session id breaking ties: an index in that
    # order lets it walk the index alone (to the page's offset) and read just the page's rows.
    db.execute("DROP INDEX idx_sessions_started")
    db.execute("CREATE INDEX idx_sessions_started ON sessions(started_at DESC, session_id)")
    db.execute("DROP INDEX idx_sessions_status_started")
    db.execute("CREATE INDEX idx_sessions_status_started ON sessions(status, started_at DESC, session_id)")


def m011_events_errors_index(db):
    # Incidents read the error events of a time window across sessions: an index holding only
    # the error events keeps that read proportional to the errors, not to all the events.
    db.execute("CREATE INDEX idx_events_errors_ts ON events(timestamp) WHERE is_error = 1")


def m012_alert_resolution(db):
    # An alert is firing until an evaluation finds its rule's condition no longer holds: then
    # it is resolved, and webhooks hear of it (alert.resolved; PagerDuty's resolve).
    db.execute("ALTER TABLE alert_events ADD COLUMN resolved_at TEXT")
    db.execute("CREATE INDEX idx_alert_events_open ON alert_events(rule_id) WHERE resolved_at IS NULL")


def m013_rule_severity(db):
    # How urgent a rule's alerts are (PagerDuty's payload.severity); rules made before it
    # keep the severity every alert had until then.
    db.execute("ALTER TABLE alert_rules ADD COLUMN severity TEXT NOT NULL DEFAULT 'warning'")


def _session_stats_change(new: str | None, old: str | None, duration: str, *, costs: bool = False) -> str:
    """One trigger statement adding the `new` session row to its group and taking the `old`
    one away (either may be None; with both, they are in the same group). `costs`: with the
    cost columns of m040 (m009's triggers, without them, stay as they were made)."""
    key = new or old

    def value(template: str) -> str:
        added = template.format(row=new) if new else None
        taken = template.format(row=old) if old else None
        return f"{added} - {taken}" if added and taken else added or f"-{taken}"

    ended = "({row}.ended_at IS NOT NULL)"
    wall = "COALESCE(CASE WHEN {row}.ended_at IS NOT NULL THEN " + duration.replace("{0}", "{row}.") + " END, 0)"
    cost_values = cost_set = ""
    if costs:
        cost_values = (f", {value('COALESCE({row}.cost_usd, 0)')}, {value('({row}.cost_usd IS NOT NULL)')}, "
                       f"{value('{row}.unpriced_calls')}")
        cost_set = (", cost_usd = cost_usd + excluded.cost_usd, "
                    "priced_sessions = priced_sessions + excluded.priced_sessions, "
                    "unpriced_calls = unpriced_calls + excluded.unpriced_calls")
    return f"""
        INSERT INTO session_stats VALUES (
            substr({key}.started_at, 1, 10), {key}.agent_name, {key}.status,
            {(1 if new else 0) - (1 if old else 0)},
            {value("{row}.event_count")}, {value("{row}.total_tokens_in")}, {value("{row}.total_tokens_out")},
            {value(ended)}, {value(wall)}{cost_values})
        ON CONFLICT (day, agent_name, status) DO UPDATE SET
            sessions = sessions + excluded.sessions, events = events + excluded.events,
            tokens_in = tokens_in + excluded.tokens_in, tokens_out = tokens_out + excluded.tokens_out,
            ended = ended + excluded.ended, duration_sum = duration_sum + excluded.duration_sum{cost_set};"""
